"""The child of ``warehouse.sandbox``: one analyst query with its address space capped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

# DuckDB's Python client imports pandas (about 0.2 s) to look at any query parameter, and
# the query check passes one. Nothing here uses pandas: a child started for every query
# starts sooner, and leaves its address space to the query, without it.
sys.modules.setdefault("pandas", None)  # type: ignore[arg-type]

import polars as pl  # noqa: E402

from warehouse import errors  # noqa: E402
from warehouse.errors import QueryError  # noqa: E402
from warehouse.sandbox import (  # noqa: E402
    EXIT_OUT_OF_MEMORY,
    EXIT_REFUSED,
    MAX_RESULT_BYTES,
    SandboxRequest,
)


def _serve() -> int:
    """The child: limit the address space, run the query, write the result."""
    import resource

    request = json.loads(sys.stdin.buffer.read())
    memory = int(request.pop("memory_bytes"))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        frame, truncated, elapsed = _query(SandboxRequest(**request))
        body = _ipc(frame)
    except errors.WarehouseError as exc:
        if "out of memory" in str(exc).lower():
            # DuckDB's own limit: its advice (SET memory_limit) is not the user's to take
            return EXIT_OUT_OF_MEMORY
        refusal = {"kind": type(exc).__name__, "message": str(exc)}
        sys.stderr.write(json.dumps(refusal) + "\n")
        return EXIT_REFUSED
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    except Exception as exc:  # DuckDB's own out-of-memory and the like: one line
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "memory" in text.lower() or "bad_alloc" in text:
            return EXIT_OUT_OF_MEMORY
        sys.stderr.write(json.dumps({"kind": "QueryError", "message": text}) + "\n")
        return EXIT_REFUSED
    header = json.dumps({"truncated": truncated, "elapsed_ms": elapsed}).encode()
    sys.stdout.buffer.write(header + b"\n" + body)
    return 0


def _query(request: SandboxRequest) -> tuple[pl.DataFrame, bool, float]:
    from warehouse.catalog import parse_catalog
    from warehouse.reader import Warehouse

    catalog = (
        parse_catalog(request.catalog, request.catalog_data, where="catalog")
        if request.catalog
        else None
    )
    result = Warehouse(Path(request.warehouse), catalog=catalog).sql(
        request.sql, time_limit_s=request.time_limit_s, row_cap=request.row_cap
    )
    return result.frame, result.truncated, result.elapsed_ms


def _ipc(frame: pl.DataFrame) -> bytes:
    import io

    if frame.estimated_size() > MAX_RESULT_BYTES:
        raise QueryError(
            f"the result is over {MAX_RESULT_BYTES // 2**20} MB; select fewer or shorter "
            "columns, or add LIMIT"
        )
    buffer = io.BytesIO()
    frame.write_ipc_stream(buffer)
    return buffer.getvalue()


if __name__ == "__main__":
    sys.exit(_serve())
