"""The DuckDB extensions a DuckLake catalog needs (postgres, ducklake, httpfs for a bucket),
loaded from their PyPI packages, never downloaded: each file linked under the name DuckDB
derives its entry point from, in a folder private to this user, and a marker once their
signatures were checked."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from pathlib import Path

from warehouse.errors import CatalogError
from warehouse.object_store import httpfs_file

DUCKDB_VERSION = "v1.5.5"
"""The DuckDB release the packaged extension files are built for."""

_EXTENSIONS = (
    # (PyPI package, file in it, name DuckDB derives the entry point from)
    ("duckdb_extension_postgres", "postgres", "postgres_scanner"),
    ("duckdb_extension_ducklake", "ducklake", "ducklake"),
)

_ext_lock = threading.Lock()


def _private_folder() -> Path:
    """``evalhouse-ext-<uid>`` in the temp folder, owned by this user and closed to others
    (the links in it decide which code DuckDB loads)."""
    folder = Path(tempfile.gettempdir()) / f"evalhouse-ext-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if folder.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise CatalogError(f"{folder} is not a private folder of this user; remove it")
    return folder


def extension_files(*, httpfs: bool) -> list[Path]:
    """The extension files of the PyPI packages, under the names DuckDB expects: postgres
    and ducklake, and httpfs when the data is in a bucket.

    DuckDB derives an extension's entry point from its file name, and the postgres package
    ships ``postgres.duckdb_extension`` for the extension named ``postgres_scanner``; so
    each file is linked under its right name in a private folder of this process."""
    with _ext_lock:
        folder = _private_folder()
        out = []
        for package, stem, name in _EXTENSIONS:
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                raise CatalogError(
                    f"the Python package {package.replace('_', '-')} is missing; "
                    "reinstall evalhouse (pip install -e .)"
                )
            source = (
                Path(next(iter(spec.submodule_search_locations)))
                / "extensions"
                / DUCKDB_VERSION
                / f"{stem}.duckdb_extension"
            )
            if not source.is_file():
                raise CatalogError(f"{package} has no {DUCKDB_VERSION} extension file")
            out.append(_link(folder, source, name))
        if httpfs:
            out.append(_link(folder, httpfs_file(DUCKDB_VERSION), "httpfs"))
        return out


def _link(folder: Path, source: Path, name: str) -> Path:
    """``folder/<name>.duckdb_extension`` pointing at ``source``."""
    link = folder / f"{name}.duckdb_extension"
    if not (link.is_symlink() and link.resolve() == source.resolve()):
        # Atomic replace: another process may be reading the link right now.
        fresh = folder / f".{name}.{os.getpid()}.{threading.get_ident()}"
        fresh.unlink(missing_ok=True)
        fresh.symlink_to(source)
        fresh.replace(link)
    return link


def verified_stamp(paths: list[Path]) -> Path:
    """The marker saying these exact extension files (path, size, time, inode) loaded once
    with their signatures checked. Checking costs about a second of CPU per instance (it
    hashes 80 MB), on every ``evalhouse sql``; the marker lives in the user's private
    folder, so only the user (who could change the package files anyway) can forge it."""
    digest = hashlib.sha256()
    for path in paths:
        real = path.resolve()
        info = real.stat()
        digest.update(f"{real}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino};".encode())
    return paths[0].parent / f"verified-{digest.hexdigest()[:32]}"
