"""A sample's ground-truth passages, read from its run's test-set file when the file is
still there. Not a warehouse query: the file is cached on its path and modification time."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.data import TTL_S, home_paths
from engine.testsets import TestSetError, load_test_set


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=8)
def _test_set_chunks(path: str, mtime_ns: int) -> dict[str, list[dict[str, str]]]:
    loaded = load_test_set(Path(path))
    return {
        case.id: [
            {"chunk_id": c.chunk_id, "page_url": c.page_url, "text": c.text}
            for c in case.ground_truth
        ]
        for case in loaded.cases
    }


def ground_truth(test_set: str | None, sample_id: str) -> list[dict[str, str]] | None:
    """The ground-truth passages of a sample, read from the run's test set when the file is
    still there (None when it is not: the page then shows the matched passages only)."""
    if not test_set:
        return None
    candidates = [Path(test_set), home_paths().home / test_set, home_paths().test_sets / test_set]
    for path in candidates:
        try:
            if path.is_file():
                chunks = _test_set_chunks(str(path.resolve()), path.stat().st_mtime_ns)
                return chunks.get(sample_id)
        except (OSError, TestSetError):
            return None
    return None
