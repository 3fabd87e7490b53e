"""Wait until a Streamlit page in the browser has finished drawing, instead of a fixed sleep.

A fixed ``wait_for_timeout(1500)`` is too long on an idle machine and can be too short on a
loaded one. This polls in the page every 100 ms: the script is not running, no element is
stale, and the main block's markup, SVG paths and canvases have not changed for
``quiet_ms`` (Vega draws into the SVG and the data grid mounts its scroller in the same
tick as its canvas, so a quiet DOM means the last chart and table are drawn)."""

from __future__ import annotations

from typing import Any

_SETTLED_JS = """
(quiet) => {
  const state = window.__ehSettle || (window.__ehSettle = {sig: null, since: 0});
  const main = document.querySelector('[data-testid=stMain]');
  const busy =
    document.querySelector('[data-testid=stStatusWidgetRunningIcon]') !== null ||
    document.querySelector('[data-stale=true]') !== null;
  const sig = [
    main ? main.innerHTML.length : -1,
    document.querySelectorAll('svg path').length,
    document.querySelectorAll('canvas').length,
  ].join('/');
  const now = performance.now();
  if (busy || sig !== state.sig) {
    state.sig = sig;
    state.since = now;
    return false;
  }
  return now - state.since >= quiet;
}
"""


def settle(page: Any, quiet_ms: int = 400, timeout_ms: int = 30_000) -> None:
    """Return once ``page`` has been idle and unchanged for ``quiet_ms``."""
    page.evaluate("() => { window.__ehSettle = null; }")  # no quiet time carried over
    page.wait_for_function(_SETTLED_JS, arg=quiet_ms, polling=100, timeout=timeout_ms)
