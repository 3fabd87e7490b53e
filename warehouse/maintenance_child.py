"""The child of ``warehouse.maintenance.maintain``: one maintenance pass of a catalog.

It reads one JSON request on standard input (the catalog and the pass's options) and writes
JSON lines on standard output: ``{"message": ...}`` whenever the pass has something to say
(who holds the commit lock), then ``{"report": ...}``, or ``{"error": {"kind", "message"}}``
and exit code 2.
"""

from __future__ import annotations

import json
import sys

from warehouse.catalog import parse_catalog
from warehouse.errors import WarehouseError
from warehouse.maintenance import maintain_here, report_json

EXIT_REFUSED = 2


def _say(message: str) -> None:
    print(json.dumps({"message": message}), flush=True)


def _serve() -> int:
    request = json.loads(sys.stdin.read())
    try:
        catalog = parse_catalog(request["catalog"], request["catalog_data"], where="catalog")
        report = maintain_here(
            catalog,
            keep_s=float(request["keep_s"]),
            grace_s=float(request["grace_s"]),
            wait_s=float(request["wait_s"]),
            on_message=_say,
        )
    except WarehouseError as exc:
        refusal = {"kind": type(exc).__name__, "message": str(exc)}
        print(json.dumps({"error": refusal}), flush=True)
        return EXIT_REFUSED
    print(report_json(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
