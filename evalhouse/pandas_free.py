"""Commands that never load pandas, though the libraries they call would.

pyarrow imports pandas the first time it converts any Python list, and DuckDB's client
whenever a query has parameters, each only to ask whether a value is a pandas object:
about 0.35 s and 0.15 s of CPU in every ``evalhouse run`` process (0.15 s in every
ingest), for nothing a command hands them. A command runs inside ``pandas_refused()``:
``import pandas`` fails there, both libraries take the failure as "not a pandas object",
and pyarrow remembers it for its probe only (``to_pandas`` still imports pandas; polars,
if first imported in the block, takes pandas for absent for the rest of the process).
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


class _RefusePandas(importlib.abc.MetaPathFinder):
    """Makes ``import pandas`` fail while installed."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "pandas" or fullname.startswith("pandas."):
            # "not installed": the one failure polars' own availability probe expects
            raise ModuleNotFoundError("pandas is not loaded by an evalhouse command", name=fullname)
        return None


@contextmanager
def pandas_refused(refuse: bool = True) -> Iterator[None]:
    """Refuse ``import pandas`` while the block runs, unless something loaded it already.

    The import hook is global, so only a process that does nothing else meanwhile (a CLI
    command: its threads are its own) may refuse; ``import pandas`` works again after."""
    if not refuse or "pandas" in sys.modules:
        yield
        return
    refuse_hook = _RefusePandas()
    sys.meta_path.insert(0, refuse_hook)
    try:
        yield
    finally:
        sys.meta_path.remove(refuse_hook)
