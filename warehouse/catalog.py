"""The warehouse as a DuckLake catalog on PostgreSQL (``--catalog postgres:<conninfo>``).

The same tables, views and ledger as ``warehouse.duckdb``, kept by DuckLake: the metadata
(tables, snapshots, which Parquet file holds which rows) lives in PostgreSQL, the rows in
Parquet files under a shared data folder. Every transaction is a snapshot, so readers never
wait for a writer, and several ingest processes (on several machines) may write at once.

Two things DuckLake does not do for us, done here:

* Idempotent ingest. DuckLake merges two concurrent inserts into one table without a
  conflict, so two ingesters that load the same lake part would both commit it. Every
  ingest commit therefore runs under one PostgreSQL advisory lock and first re-reads the
  ledger at the newest snapshot: if another ingester committed parts of the same runs since
  this transaction began, it is rolled back and retried on the new snapshot. The expensive
  part (reading lake parts, writing Parquet) runs outside the lock, in parallel.
* The reader sandbox. Readers get one in-process DuckDB instance per catalog with the lake
  attached read-only, then file access switched off and the configuration locked, exactly
  like the file's read connections; each query runs on its own cursor (a fresh snapshot).

The connection string may hold a password: it is registered with ``engine.secrets`` and
never shown (``Catalog.label`` is the form fit for logs and errors).
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from engine import secrets
from warehouse import ENV_CATALOG, ENV_CATALOG_DATA
from warehouse.commit_lock import LOCK_DB, advisory_lock, lock_conninfo
from warehouse.db import WarehouseBusy, WarehouseMissing, one_line
from warehouse.ducklake_extensions import extension_files, verified_stamp

# Re-exported: callers catch the catalog's errors where they always found them.
from warehouse.errors import (
    LOCK_WAIT_S,
    CatalogError as CatalogError,
    CatalogUnavailable as CatalogUnavailable,
)
from warehouse.object_store import (
    S3Location,
    count_files,
    create_secret,
    parse_s3,
    probe as probe_bucket,
)

LAKE = "lake"
"""The name the DuckLake catalog is attached under in every connection."""


class CommitConflict(Exception):
    """Another ingester committed parts of the same runs first: retry on a new snapshot."""


_KEY_VALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Catalog:
    """A DuckLake catalog: a libpq connection string and the shared folder (or bucket
    prefix) of its data."""

    conninfo: str = field(repr=False)
    """libpq connection string (``host=... dbname=...`` or ``postgresql://...``)."""
    data_path: Path | S3Location
    """Folder of the catalog's Parquet files, the same for every process that uses it, or
    the ``s3://`` prefix that holds them (``warehouse.object_store``)."""

    @property
    def data_url(self) -> str:
        """The data path as DuckLake and DuckDB's file system take it (trailing slash)."""
        if isinstance(self.data_path, S3Location):
            return self.data_path.url
        return str(self.data_path) + "/"

    def data_names(self) -> list[str]:
        """The ways texts name the data path (masked in what analysts see)."""
        if isinstance(self.data_path, S3Location):
            return [str(self.data_path)]
        return [str(self.data_path), str(self.data_path.resolve())]

    def data_files(self, con: duckdb.DuckDBPyConnection) -> int:
        """Parquet files under the data path, referenced or not (``con`` lists a bucket)."""
        if isinstance(self.data_path, S3Location):
            return count_files(con, self.data_path)
        folder = self.data_path
        return sum(1 for _ in folder.rglob("*.parquet")) if folder.is_dir() else 0

    def __repr__(self) -> str:
        return f"Catalog({self.label!r}, data_path={str(self.data_path)!r})"

    @property
    def label(self) -> str:
        """``postgres:<conninfo>`` with any password masked: the form for logs and errors."""
        return "postgres:" + _masked(self.conninfo)

    def redact(self, text: str) -> str:
        """``text`` with the connection string and its password masked."""
        text = text.replace(self.conninfo, _masked(self.conninfo))
        return secrets.redact(text)


def _masked(conninfo: str) -> str:
    if conninfo.startswith(("postgres://", "postgresql://")):
        return secrets.redact_url(conninfo)
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", conninfo)


def _check_conninfo(conninfo: str, where: str) -> None:
    """Refuse text libpq would not read as a connection string (checked here so that the
    refusal is one line naming the flag, before any connection is tried)."""
    if conninfo.startswith(("postgres://", "postgresql://")):
        try:
            parts = urlsplit(conninfo)
            _ = parts.port
        except ValueError as exc:
            raise CatalogError(f"{where}: not a valid postgresql:// URI ({exc})") from None
        secrets.register_url(conninfo)
        return
    try:
        words = shlex.split(conninfo)
    except ValueError as exc:
        raise CatalogError(f"{where}: unbalanced quotes in the connection string") from exc
    bad = [w for w in words if not _KEY_VALUE.match(w)]
    if not words or bad:
        shown = f" ({_masked(bad[0])!r} is not key=value)" if bad else ""
        raise CatalogError(
            f"{where}: not a libpq connection string{shown}; write "
            "postgres:host=HOST dbname=DB user=USER (keep the password in ~/.pgpass or "
            "PGPASSWORD)"
        )
    for word in words:
        key, _, value = word.partition("=")
        if key == "password":
            secrets.register(value)


def parse_catalog(text: str, data: str | os.PathLike[str] | None, *, where: str) -> Catalog:
    """The catalog of ``--catalog`` text and ``--catalog-data``; ``CatalogError`` (one line
    naming ``where``) when the text is no ``postgres:`` connection string or the data
    folder is missing."""
    text = text.strip()
    scheme, sep, conninfo = text.partition(":")
    if not sep or scheme != "postgres":
        raise CatalogError(
            f"{where}: {_masked(text)[:60]!r} is not postgres:<libpq connection string> "
            "(for example postgres:host=db.internal dbname=evalhouse user=evalhouse)"
        )
    conninfo = conninfo.strip()
    _check_conninfo(conninfo, where)
    if data is None or not str(data).strip():
        raise CatalogError(
            f"{where} needs a data folder: --catalog-data DIR or {ENV_CATALOG_DATA} (a folder "
            "every runner, ingest and dashboard machine reaches at the same path)"
        )
    text = str(data).strip()
    if text.startswith("s3://"):
        return Catalog(conninfo, parse_s3(text))
    _refuse_url(text)
    folder = Path(data).expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise CatalogError(f"--catalog-data {folder}: not a folder")
    return Catalog(conninfo, folder)


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _refuse_url(data: str) -> None:
    """Refuse a data path that is a URL other than ``s3://`` (``gs://``, ``https://``,
    ...), which would otherwise become a local folder named ``gs:``. Other stores speak
    the S3 protocol too (GCS interoperability, R2, MinIO): name them through s3:// and an
    endpoint."""
    found = _URL.match(data)
    if not found:
        return
    parts = urlsplit(data)
    shown = f"{parts.scheme}://{parts.hostname or ''}{parts.path}"[:120]
    raise CatalogError(
        f"catalog data path {shown!r}: object storage through {found.group(1)}:// is not "
        "supported; use "
        "s3://BUCKET/PREFIX (any S3-compatible store, with EVALHOUSE_S3_ENDPOINT: GCS "
        "interoperability, R2, MinIO, Ceph) or a folder every machine mounts at one path"
    )


def catalog_from_env(environ: Mapping[str, str] | None = None) -> Catalog | None:
    """The catalog named by ``EVALHOUSE_CATALOG`` / ``EVALHOUSE_CATALOG_DATA``, or None."""
    env = os.environ if environ is None else environ
    text = env.get(ENV_CATALOG, "").strip()
    if not text:
        return None
    return parse_catalog(text, env.get(ENV_CATALOG_DATA), where=ENV_CATALOG)


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


_REFUSALS = (
    "password authentication failed",
    "no password supplied",
    "does not exist",  # the role or the database
    "no pg_hba.conf entry",
    "permission denied",
    "invalid connection option",
)
"""What a PostgreSQL server says when it answers but refuses the connection's settings: a
mistake in ``--catalog`` (exit 2), not an outage (exit 3)."""


def _connect(
    catalog: Catalog,
    *,
    read_only: bool,
    wait_s: float = LOCK_WAIT_S,
    on_wait: Callable[[str], None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with both extensions loaded from their packages and the
    catalog attached as ``lake`` (and made the default database); a writer waits at most
    ``wait_s`` for the commit lock it attaches under (``on_wait`` hears who holds it)."""
    files = extension_files(httpfs=isinstance(catalog.data_path, S3Location))
    stamp = verified_stamp(files)
    verified = stamp.exists()
    con = duckdb.connect(
        ":memory:",
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
            "allow_unsigned_extensions": verified,
            "threads": 2,
            "memory_limit": "1GB",
        },
    )
    attaching = False
    try:
        for path in files:
            con.execute(f"LOAD {_sql_text(str(path))}")
        if not verified:
            stamp.touch()
        if isinstance(catalog.data_path, S3Location):
            probe_bucket(con, catalog.data_path, create_secret(con, catalog.data_path))
        attaching = True
        if not read_only and isinstance(catalog.data_path, Path):
            catalog.data_path.mkdir(parents=True, exist_ok=True)
        options = f"DATA_PATH {_sql_text(catalog.data_url)}"
        attach = f"ATTACH {_sql_text('ducklake:postgres:' + catalog.conninfo)} AS {LAKE}"
        if read_only:
            con.execute(f"{attach} ({options}, READ_ONLY)")
        else:
            # A writer may be the one that creates the DuckLake's metadata tables; two
            # creating at once collide, so writers attach under the commit lock.
            lock_db = _sql_text(lock_conninfo(catalog.conninfo))
            con.execute(f"ATTACH {lock_db} AS {LOCK_DB} (TYPE postgres)")
            with advisory_lock(con, wait_s, on_wait):
                con.execute(f"{attach} ({options})")
        con.execute(f"USE {LAKE}")
    except (WarehouseBusy, CatalogError):
        con.close()
        raise
    except duckdb.Error as exc:
        con.close()
        if read_only and "creating a new DuckLake is explicitly disabled" in str(exc):
            raise WarehouseMissing(_NO_WAREHOUSE.format(label=catalog.label)) from None
        text = f"cannot open the catalog {catalog.label}: {catalog.redact(one_line(str(exc)))}"
        # A server that does not answer is an outage; one that answers "no such role" or
        # "wrong password", or an extension that does not load, is a setting to fix.
        refused = any(m in str(exc) for m in _REFUSALS)
        kind = CatalogUnavailable if attaching and not refused else CatalogError
        raise kind(text[:460]) from None
    except OSError as exc:
        con.close()
        raise CatalogError(f"cannot use --catalog-data {catalog.data_path}: {exc}") from None
    return con


# ----------------------------------------------------------------------------- readers

_NO_WAREHOUSE = (
    "the catalog {label} holds no warehouse yet. Fill it with `evalhouse ingest` (or "
    "`evalhouse migrate --to ...`) using the same --catalog."
)

_readers: dict[Catalog, duckdb.DuckDBPyConnection] = {}
_readers_lock = threading.Lock()


def _sandboxed_reader(catalog: Catalog) -> duckdb.DuckDBPyConnection:
    """The process's read-only instance over ``catalog``: lake attached read-only, then
    file access off and the configuration locked (no later query can undo either)."""
    with _readers_lock:
        con = _readers.get(catalog)
        if con is None:
            con = _connect(catalog, read_only=True)
            # DuckLake reads its data files through DuckDB's file system: with external
            # access off, only files known at attach time would stay readable, so the
            # data folder (and nothing else) is allowed; ingest adds files there later.
            con.execute("SET allowed_directories = $dirs", {"dirs": [catalog.data_url]})
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            _readers[catalog] = con
        return con


@contextmanager
def read_connection(catalog: Catalog) -> Iterator[duckdb.DuckDBPyConnection]:
    """A sandboxed read connection (a cursor of the process's reader instance: opening one
    costs no new attach, and each sees the newest committed snapshot)."""
    cursor = _sandboxed_reader(catalog).cursor()
    try:
        cursor.execute(f"USE {LAKE}")
        found = cursor.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = $db "
            "AND schema_name = 'main' AND table_name = 'ingested_files'",
            {"db": LAKE},
        ).fetchone()
        if not (found and found[0]):
            raise WarehouseMissing(_NO_WAREHOUSE.format(label=catalog.label))
        yield cursor
    finally:
        cursor.close()


def close_readers() -> None:
    """Close every cached reader and writer instance (tests, and a process done with a
    catalog)."""
    for lock, cache in ((_readers_lock, _readers), (_writers_lock, _writers)):
        with lock:
            for con in cache.values():
                with suppress(duckdb.Error):
                    con.close()
            cache.clear()


# ----------------------------------------------------------------------------- writers


class CommitGuard:
    """Serialises the commits of every ingester of one catalog (see the module docstring)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, catalog: Catalog, wait_s: float = LOCK_WAIT_S
    ) -> None:
        self.con = con
        self.catalog = catalog
        self.wait_s = wait_s

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the catalog's commit lock, waiting at most ``wait_s`` for it (see
        ``warehouse.commit_lock``)."""
        with advisory_lock(self.con, self.wait_s):
            yield

    def fresh(
        self, sql: str, params: Mapping[str, object] | None = None
    ) -> list[tuple[object, ...]]:
        """Rows of ``sql`` at the newest snapshot (a new transaction on its own cursor)."""
        cursor = self.con.cursor()
        try:
            cursor.execute(f"USE {LAKE}")
            return cursor.execute(sql, dict(params) if params else None).fetchall()
        finally:
            cursor.close()


_writers: dict[Catalog, duckdb.DuckDBPyConnection] = {}
_writers_lock = threading.Lock()


def _writer_instance(
    catalog: Catalog, wait_s: float, on_wait: Callable[[str], None] | None
) -> duckdb.DuckDBPyConnection:
    """The process's read-write instance over ``catalog`` (kept: a run ingests after
    every flush, and loading the extensions costs about a second each time)."""
    with _writers_lock:
        con = _writers.get(catalog)
        if con is None:
            con = _connect(catalog, read_only=False, wait_s=wait_s, on_wait=on_wait)
            _writers[catalog] = con
        return con


@contextmanager
def write_connection(
    catalog: Catalog,
    *,
    wait_s: float = LOCK_WAIT_S,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[tuple[duckdb.DuckDBPyConnection, CommitGuard]]:
    """A read-write connection to the catalog and the guard of its commits (which waits
    at most ``wait_s`` for the commit lock; so does this process's first connection, which
    attaches under it: ``on_wait`` hears who holds it then)."""
    con = _writer_instance(catalog, wait_s, on_wait).cursor()
    try:
        con.execute(f"USE {LAKE}")
        yield con, CommitGuard(con, catalog, wait_s)
    finally:
        with suppress(duckdb.Error):
            con.close()


def is_conflict(exc: BaseException) -> bool:
    """Whether a DuckDB error is DuckLake refusing a commit that conflicts with another
    transaction's (the transaction is retried on a new snapshot)."""
    text = str(exc)
    return isinstance(exc, duckdb.TransactionException) or "conflict" in text.lower()
