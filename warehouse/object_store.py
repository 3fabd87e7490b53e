"""A DuckLake catalog's data in an S3-compatible bucket (``--catalog-data s3://bucket/prefix``).

DuckDB reaches the bucket through its ``httpfs`` extension, loaded from the PyPI package
``duckdb-extension-httpfs`` like the other extensions (never downloaded at run time). The
settings come from the environment every AWS tool reads, so one set of variables serves
the AWS CLI and evalhouse alike:

* credentials: ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``),
  else the profile ``AWS_PROFILE`` (or ``default``) of ``~/.aws/credentials``
  (``AWS_SHARED_CREDENTIALS_FILE``);
* the endpoint of an S3-compatible store (MinIO, Ceph, R2, GCS interoperability):
  ``EVALHOUSE_S3_ENDPOINT``, else ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``;
* the region: ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the profile's in ``~/.aws/config``;
* ``EVALHOUSE_S3_URL_STYLE`` (``path`` or ``vhost``) and ``EVALHOUSE_S3_USE_SSL``.

The keys are read when a connection opens and handed to DuckDB as a temporary secret of
that in-memory instance (``CREATE TEMPORARY SECRET``): never written to a file, the lake,
the catalog (whose data path is the bare ``s3://`` URL) or a log; they are registered with
``engine.secrets`` so that any message quoting them is masked.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from engine import secrets
from warehouse.errors import CatalogError, CatalogUnavailable

ENV_S3_ENDPOINT = "EVALHOUSE_S3_ENDPOINT"
ENV_S3_URL_STYLE = "EVALHOUSE_S3_URL_STYLE"
ENV_S3_USE_SSL = "EVALHOUSE_S3_USE_SSL"

DEFAULT_REGION = "us-east-1"

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
"""S3's bucket naming rules (lower case, 3 to 63 characters)."""


@dataclass(frozen=True)
class S3Location:
    """A folder in a bucket: where a catalog's Parquet files live."""

    bucket: str
    prefix: str
    """Key prefix without leading or trailing slash ('' for the bucket's root)."""

    @property
    def url(self) -> str:
        """``s3://bucket/prefix/``: the DATA_PATH DuckLake stores (with its trailing slash)."""
        return f"s3://{self.bucket}/{self.prefix}/" if self.prefix else f"s3://{self.bucket}/"

    def __str__(self) -> str:
        return self.url.rstrip("/")


def parse_s3(text: str) -> S3Location:
    """The location of ``s3://bucket/prefix``; ``CatalogError`` naming the flag otherwise."""
    parts = urlsplit(text)
    if parts.username or parts.password or parts.port or parts.query or parts.fragment:
        raise CatalogError(
            "--catalog-data: write s3://BUCKET/PREFIX only (credentials go in the AWS "
            "environment variables or ~/.aws/credentials, the endpoint in "
            f"{ENV_S3_ENDPOINT})"
        )
    bucket = parts.hostname or ""
    if not _BUCKET.match(bucket):
        raise CatalogError(
            f"--catalog-data s3://{bucket}: not a bucket name (3 to 63 lower-case letters, "
            "digits, dots and hyphens)"
        )
    prefix = parts.path.strip("/")
    if "//" in prefix or any(p in (".", "..") for p in prefix.split("/")):
        raise CatalogError(f"--catalog-data s3://{bucket}/{prefix}: empty or relative key parts")
    return S3Location(bucket, prefix)


@dataclass(frozen=True)
class S3Settings:
    """How to reach the bucket, read from the environment when a connection opens."""

    key_id: str
    secret: str
    session_token: str
    region: str
    endpoint: str
    """host[:port] of an S3-compatible store; '' for AWS itself."""
    url_style: str
    use_ssl: bool
    source: str
    """Where the keys came from, in words (never the keys)."""


def _profile_files(env: Mapping[str, str]) -> tuple[Path, Path]:
    home = Path(env.get("HOME") or Path.home())
    credentials = env.get("AWS_SHARED_CREDENTIALS_FILE") or str(home / ".aws" / "credentials")
    config = env.get("AWS_CONFIG_FILE") or str(home / ".aws" / "config")
    return Path(credentials).expanduser(), Path(config).expanduser()


def _read_ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read {path}: {type(exc).__name__}") from None
    return parser


def _credentials(env: Mapping[str, str]) -> tuple[str, str, str, str]:
    """(key id, secret, session token, where from): the environment, else the profile."""
    key_id, secret = env.get("AWS_ACCESS_KEY_ID", ""), env.get("AWS_SECRET_ACCESS_KEY", "")
    if key_id and secret:
        return key_id, secret, env.get("AWS_SESSION_TOKEN", ""), "the AWS_* variables"
    profile = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE") or "default"
    path, _ = _profile_files(env)
    parsed = _read_ini(path)
    section = parsed[profile] if parsed.has_section(profile) else None
    if section is not None and section.get("aws_access_key_id"):
        return (
            section.get("aws_access_key_id", ""),
            section.get("aws_secret_access_key", ""),
            section.get("aws_session_token", ""),
            f"profile {profile!r} of {path}",
        )
    raise CatalogError(
        "--catalog-data s3://...: no credentials; set AWS_ACCESS_KEY_ID and "
        f"AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile of {path}"
    )


def _region(env: Mapping[str, str]) -> str:
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or ""
    if region:
        return region
    profile = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE") or "default"
    config = _read_ini(_profile_files(env)[1])
    for name in (f"profile {profile}", profile):
        if config.has_section(name) and config[name].get("region"):
            return config[name].get("region", DEFAULT_REGION)
    return DEFAULT_REGION


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise CatalogError(f"{name}={value[:20]!r}: write true or false")


def s3_settings(environ: Mapping[str, str] | None = None) -> S3Settings:
    """The settings of the environment; ``CatalogError`` (one line naming the variable)
    when one is malformed or no credentials are found."""
    env = os.environ if environ is None else environ
    key_id, secret, token, source = _credentials(env)
    for value in (key_id, secret, token):
        if value:
            secrets.register(value)
    raw = env.get(ENV_S3_ENDPOINT) or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    endpoint, ssl_default = "", True
    if raw:
        parts = urlsplit(raw if "://" in raw else f"https://{raw}")
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/"):
            raise CatalogError(
                f"{ENV_S3_ENDPOINT}={raw[:60]!r}: write host:port or http(s)://host:port"
            )
        endpoint = parts.netloc
        ssl_default = parts.scheme == "https"
    # An S3-compatible store usually serves buckets as paths (MinIO does only that); AWS
    # itself prefers virtual hosts.
    style = env.get(ENV_S3_URL_STYLE, "").strip().lower() or ("path" if endpoint else "vhost")
    if style not in ("path", "vhost"):
        raise CatalogError(f"{ENV_S3_URL_STYLE}={style[:20]!r}: write path or vhost")
    use_ssl = _flag(env, ENV_S3_USE_SSL, ssl_default)
    return S3Settings(key_id, secret, token, _region(env), endpoint, style, use_ssl, source)


def httpfs_file(version: str) -> Path:
    """The httpfs extension of the PyPI package ``duckdb-extension-httpfs``."""
    spec = importlib.util.find_spec("duckdb_extension_httpfs")
    if spec is None or not spec.submodule_search_locations:
        raise CatalogError(
            "--catalog-data s3://... needs the Python package duckdb-extension-httpfs; "
            "reinstall evalhouse (pip install -e .)"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    path = folder / "extensions" / version / "httpfs.duckdb_extension"
    if not path.is_file():
        raise CatalogError(f"duckdb-extension-httpfs has no {version} extension file")
    return path


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def create_secret(con: duckdb.DuckDBPyConnection, location: S3Location) -> S3Settings:
    """Give ``con`` the keys of the environment as a temporary secret scoped to the bucket
    (DuckDB's CREATE SECRET takes no bound parameters, so values are quoted literals; a
    failure message is masked)."""
    s = s3_settings()
    options = [
        "TYPE s3",
        f"KEY_ID {_text(s.key_id)}",
        f"SECRET {_text(s.secret)}",
        f"REGION {_text(s.region)}",
        f"URL_STYLE {_text(s.url_style)}",
        f"USE_SSL {'true' if s.use_ssl else 'false'}",
        f"SCOPE {_text(f's3://{location.bucket}')}",
    ]
    if s.session_token:
        options.append(f"SESSION_TOKEN {_text(s.session_token)}")
    if s.endpoint:
        options.append(f"ENDPOINT {_text(s.endpoint)}")
    try:
        con.execute(f"CREATE TEMPORARY SECRET evalhouse_s3 ({', '.join(options)})")
    except duckdb.Error as exc:
        raise CatalogError(f"cannot use the S3 settings: {_masked(str(exc), s)}") from None
    return s


def _masked(text: str, settings: S3Settings) -> str:
    for value in (settings.secret, settings.session_token, settings.key_id):
        if value:
            text = text.replace(value, "***")
    return secrets.redact(" ".join(text.split()))[:300]


_MISSING = ("NoSuchBucket", "specified bucket does not exist")
_REFUSED = ("403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "Forbidden")


def probe(con: duckdb.DuckDBPyConnection, location: S3Location, settings: S3Settings) -> None:
    """List the prefix once, so that a missing bucket (``CatalogError``: a setting to fix,
    exit 2), refused keys or an endpoint that does not answer (``CatalogUnavailable``,
    exit 3) are one clear line before DuckLake attaches."""
    where = settings.endpoint or "AWS"
    try:
        con.execute("SELECT count(*) FROM glob($p)", {"p": location.url + "*"}).fetchall()
    except duckdb.Error as exc:
        said = str(exc)
        if any(m in said for m in _MISSING):
            raise CatalogError(
                f"--catalog-data {location}: the bucket {location.bucket!r} does not exist at "
                f"{where} (create it first; evalhouse never creates buckets)"
            ) from None
        if any(m in said for m in _REFUSED):
            reason = (
                f"the keys from {settings.source} were refused (wrong, expired, or "
                "lacking s3:ListBucket)"
            )
        else:
            reason = f"no answer from {where} ({_masked(said, settings)[:160]})"
        raise CatalogUnavailable(f"cannot reach --catalog-data {location}: {reason}") from None


def count_files(con: duckdb.DuckDBPyConnection, location: S3Location) -> int:
    """Parquet objects under the location (referenced or not)."""
    row = con.execute("SELECT count(*) FROM glob($p)", {"p": location.url + "**/*.parquet"})
    found = row.fetchone()
    return int(found[0]) if found else 0
