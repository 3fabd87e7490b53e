"""Wait until a Streamlit page in the browser has finished drawing, instead of a fixed sleep.

A fixed ``wait_for_timeout(1500)`` is too long on an idle machine and can be too short on a
loaded one. This polls in the page every 100 ms: the script is not running, no element is
stale, and the main block's markup, SVG paths and canvases have not changed for
``quiet_ms`` (Vega draws into the SVG and the data grid mounts its scroller in the same
tick as its canvas, so a quiet DOM means the last chart and table are drawn)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
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


def until_shown(
    page: Any,
    act: Callable[[], None],
    shown: Any,
    *,
    attempts: int = 3,
    each_ms: int = 30_000,
) -> None:
    """Do ``act`` until the locator ``shown`` is visible, at most ``attempts`` times.

    On a loaded machine a click can land while Streamlit replaces the element under it,
    or a drop-down can close when a rerun redraws its box, and the page then waits for
    nothing; acting again once the page is quiet is what a person would do. ``act`` must
    be safe to repeat."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(1, attempts + 1):
        act()
        try:
            shown.wait_for(timeout=each_ms)
            return
        except PlaywrightTimeout:
            if attempt == attempts:
                raise
            page.keyboard.press("Escape")  # close whatever the lost act left open
            settle(page)


def report_failure(page: Any, name: str, artifacts: Path) -> None:
    """A screenshot of ``page`` and the text of its sidebar and main block, printed so a
    failure in CI, where only the log survives, shows what the browser had on screen.
    Never raises: the test's own error is the one to see."""
    try:
        page.screenshot(path=str(artifacts / f"failure-{name}.png"), full_page=True)
        for test_id in ("stSidebar", "stMain"):
            block = page.get_by_test_id(test_id)
            text = block.inner_text(timeout=5_000) if block.count() else "(absent)"
            print(f"--- {test_id} of the page at {page.url}\n{text}")
    except Exception as exc:  # a closed or crashed browser: say so and no more
        print(f"--- the page could not be read after the failure: {exc}")
