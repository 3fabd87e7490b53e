"""The multipage Streamlit dashboard: ``streamlit run dashboard/streamlit_app.py``."""
