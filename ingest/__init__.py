"""Ingest: load new lake parts into the DuckDB warehouse, incrementally and idempotently.

Only parts missing from the ``ingested_files`` ledger are loaded, in one transaction
per batch, so running ingest twice changes nothing and a crash mid-way leaves the
warehouse as it was. A batch holds whole (run, iteration) partitions, so a reader sees
every table of a partition at once or none of them, even after a kill between batches.
A corrupt part is skipped, named, recorded in the ledger, and the rest loads.
``rebuild=True`` recreates the warehouse from the lake.
"""

from __future__ import annotations

from ingest.run import IngestReport, ingest

__all__ = ["IngestReport", "ingest"]
