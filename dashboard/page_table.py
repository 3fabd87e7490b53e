"""The dashboard's pages: script, title, icon and address, in sidebar order.

One table for the router (``streamlit_app.py`` builds its ``st.Page`` list from it) and
for the server, which must know the pages' addresses before any script runs
(``dashboard.static_index``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    script: str
    """Relative to the ``dashboard`` folder."""
    title: str
    icon: str
    url_path: str
    """The page's address below the app's root; ``""`` for the default page (the root)."""


PAGES = (
    PageSpec("app_pages/overview.py", "Overview", ":material/dashboard:", ""),
    PageSpec("app_pages/trends.py", "Trends", ":material/show_chart:", "trends"),
    PageSpec("app_pages/compare.py", "Compare runs", ":material/compare_arrows:", "compare"),
    PageSpec("app_pages/leaderboard.py", "Leaderboard", ":material/leaderboard:", "leaderboard"),
    PageSpec("app_pages/claims.py", "Claims", ":material/checklist:", "claims"),
    PageSpec("app_pages/sample.py", "Sample", ":material/article:", "sample"),
    PageSpec("app_pages/conversations.py", "Conversations", ":material/forum:", "conversations"),
    PageSpec("app_pages/attribution.py", "Attribution", ":material/link:", "attribution"),
    PageSpec("app_pages/experiments.py", "Experiments", ":material/science:", "experiments"),
    PageSpec("app_pages/runs.py", "Runs", ":material/list:", "runs"),
    PageSpec("app_pages/agreement.py", "Judge agreement", ":material/rule:", "agreement"),
    PageSpec("app_pages/sql.py", "SQL", ":material/terminal:", "sql"),
)

PAGE_PATHS = tuple(page.url_path for page in PAGES if page.url_path)
"""The addresses of every page but the default one."""
