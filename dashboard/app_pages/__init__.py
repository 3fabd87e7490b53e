"""Thin pages: read filters, call ``dashboard.data``, render."""
