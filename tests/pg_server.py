"""A PostgreSQL server for the DuckLake tests: the one named by ``EVALHOUSE_TEST_PG`` (a libpq
connection string of a role that may create databases), else a throwaway cluster started
from the machine's PostgreSQL binaries in a temporary folder, on 127.0.0.1 and a free port.

PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres`` user
(or ``nobody``) and lives in a folder that user owns. ``python -m tests.pg_server`` starts
one by hand and prints its connection string (the benchmark and CI use the same code).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

_BIN_FOLDERS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
"""Debian's layout: /usr/lib/postgresql/<major>/bin, newest major first."""


def pg_bin(name: str) -> str | None:
    """The path of a PostgreSQL program (``initdb``, ``pg_ctl``, ``psql``), or None."""
    for folder in _BIN_FOLDERS:
        if (folder / name).is_file():
            return str(folder / name)
    return shutil.which(name)


def missing_reason() -> str | None:
    """Why no server can be had here, or None when one can."""
    if os.environ.get("EVALHOUSE_TEST_PG"):
        return None
    absent = [n for n in ("initdb", "pg_ctl", "psql") if pg_bin(n) is None]
    if absent:
        return (
            f"no PostgreSQL here ({', '.join(absent)} not found; `apt-get install postgresql` "
            "or set EVALHOUSE_TEST_PG to a server's connection string)"
        )
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> tuple[list[str], pwd.struct_passwd | None]:
    """The command prefix that runs a program as a non-root user (empty when not root)."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            user = pwd.getpwnam(name)
            return ["runuser", "-u", name, "--"], user
    raise RuntimeError("running as root and neither user postgres nor nobody exists")


class PgServer:
    """A server that tests create throwaway databases on."""

    def __init__(self, base_conninfo: str, *, owned: Path | None = None) -> None:
        self.base = base_conninfo
        """Connection string of the maintenance database (``postgres``)."""
        self.owned = owned
        """The data folder of a cluster this object started (None for a given server)."""

    def psql(self, sql: str, *, dbname: str = "postgres") -> str:
        """Run ``sql`` with psql on ``dbname``; returns its unaligned output."""
        conninfo = f"{self.base} dbname={dbname}"
        done = subprocess.run(
            [pg_bin("psql") or "psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", conninfo],
            input=sql,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def create_database(self, prefix: str = "evalhouse_test") -> str:
        """A new empty database; returns its connection string."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        self.psql(f'CREATE DATABASE "{name}"')
        return f"{self.base} dbname={name}"

    def stop(self) -> None:
        """Stop a cluster this object started and remove its folder."""
        if self.owned is None:
            return
        prefix, _user = _run_as()
        subprocess.run(
            [*prefix, pg_bin("pg_ctl") or "pg_ctl", "-D", str(self.owned / "data"), "-m",
             "immediate", "stop"],
            capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        shutil.rmtree(self.owned, ignore_errors=True)


def start_cluster() -> PgServer:
    """initdb a cluster in a new temporary folder and start it on 127.0.0.1."""
    prefix, user = _run_as()
    folder = Path(tempfile.mkdtemp(prefix="evalhouse-pg-"))
    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    folder.chmod(0o700)
    data = folder / "data"
    port = _free_port()
    quiet = {"capture_output": True, "text": True, "timeout": 120, "check": False}
    done = subprocess.run(
        [*prefix, pg_bin("initdb") or "initdb", "-D", str(data), "-U", "postgres",
         "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"],
        **quiet,  # type: ignore[call-overload]
    )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stderr.strip()[-500:]}")
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 "
        "-c shared_buffers=32MB"
    )
    done = subprocess.run(
        [*prefix, pg_bin("pg_ctl") or "pg_ctl", "-D", str(data), "-w", "-t", "60",
         "-l", str(folder / "log"), "-o", options, "start"],
        **quiet,  # type: ignore[call-overload]
    )  # fmt: skip
    if done.returncode != 0:
        log = (
            (folder / "log").read_text(errors="replace")[-500:] if (folder / "log").exists() else ""
        )
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()} {log}")
    return PgServer(f"host=127.0.0.1 port={port} user=postgres", owned=folder)


@contextlib.contextmanager
def server() -> Iterator[PgServer]:
    """The server of ``EVALHOUSE_TEST_PG``, else a throwaway cluster (stopped on exit)."""
    given = os.environ.get("EVALHOUSE_TEST_PG")
    if given:
        # The maintenance database is where CREATE DATABASE runs; a given dbname is replaced.
        kept = " ".join(p for p in given.split() if not p.startswith("dbname="))
        yield PgServer(kept)
        return
    started = start_cluster()
    try:
        yield started
    finally:
        started.stop()


if __name__ == "__main__":
    cluster = start_cluster()
    print(cluster.base)
    print(f"data folder {cluster.owned}; stop with: pg_ctl -D {cluster.owned}/data stop")
