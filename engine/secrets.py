"""The secret registry: every secret a run resolves is registered here and masked in text.

Whoever reads a secret (an API key from the environment, an ``{{env.NAME}}`` value put
into a header, body or URL, a password inside ``https://user:pass@host``) registers it;
every error text and log line that may carry what a server or a URL said goes through
:func:`redact`, which replaces each registered secret with ``***``. A server that echoes
the ``Authorization`` header in its error body therefore cannot put the token into an
error row, the lake, the warehouse or a progress file.

The registry is process-wide on purpose: a secret is a secret for every run of the
process, and the error paths that must mask it (targets, judges, embedders, the run's
error rows) do not share an object. Besides the value itself, the forms a server is
likely to echo are masked too: URL-encoded (query strings, form bodies) and base64
(HTTP Basic credentials, tokens wrapped in JSON by a proxy).
"""

from __future__ import annotations

import base64
import os
import re
import threading
from urllib.parse import quote, quote_plus, unquote, urlsplit

MASK = "***"
MIN_LENGTH = 4
"""Shorter values are not masked: masking "1" or "ab" everywhere would garble every
message while protecting nothing a person could not guess."""

_lock = threading.Lock()
_secrets: set[str] = set()
_values: set[str] = set()
"""Values registered so far (a header sent on every call is registered once)."""
_pattern: re.Pattern[str] | None = None


def _forms(value: str) -> set[str]:
    raw = value.encode("utf-8")
    forms = {value, quote(value, safe=""), quote_plus(value, safe="")}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.add(text)
        forms.add(text.rstrip("="))  # unpadded, as JWT-style encoders write it
    return {f for f in forms if len(f) >= MIN_LENGTH}


def register(value: str | None) -> None:
    """Mask ``value`` (and its URL-encoded and base64 forms) in everything :func:`redact`
    sees from now on. ``None``, empty and very short values are ignored."""
    if not value or len(value) < MIN_LENGTH or value in _values:
        return
    global _pattern
    with _lock:
        _values.add(value)
        new = _forms(value) - _secrets
        if not new:
            return
        _secrets.update(new)
        # Longest first, so a secret that contains another is masked whole.
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))


def register_url(url: str) -> None:
    """Register the password (and the ``user:password`` pair as Basic credentials) of a URL
    such as ``https://user:pass@host/path``; a URL without credentials registers nothing."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if parts.password is None:
        return
    password = unquote(parts.password)
    register(password)
    register(parts.password)
    user = unquote(parts.username or "")
    # The base64 of user:password is what HTTP Basic sends and a server may echo; the pair
    # itself stays readable up to the password ("bot:***@host" says who connected).
    for pair in {f"{user}:{password}", f"{parts.username}:{parts.password}"}:
        register(base64.b64encode(pair.encode()).decode("ascii"))


SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "x-auth-token"}
)
"""Request headers whose values are credentials, whatever config they came from."""


def register_headers(headers: object) -> None:
    """Register the values of credential headers of a request (``Authorization: Bearer
    tok`` registers ``tok``), so an answer that echoes them is masked like a key read from
    the environment."""
    if not isinstance(headers, dict):
        items = getattr(headers, "items", None)
        if items is None:
            return
        headers = dict(items())
    for name, value in headers.items():
        if not isinstance(name, str) or name.lower() not in SENSITIVE_HEADERS:
            continue
        if isinstance(value, str):
            scheme, _, credential = value.strip().partition(" ")
            if credential and scheme.isalpha():  # "Bearer ***" keeps saying what it was
                register(credential.strip())
                if scheme.lower() == "basic":
                    _register_basic(credential.strip())
            else:
                register(value.strip())


def _register_basic(encoded: str) -> None:
    """The password inside Basic credentials, in its own forms too."""
    try:
        pair = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return
    register(pair)
    register(pair.partition(":")[2])


def redact_value(value: object) -> object:
    """``value`` with :func:`redact` applied to every string in it (lists, tuples and
    dicts walked); other values as they are. What reaches the lake passes here."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value


def env_secret(name: str) -> str | None:
    """The environment variable ``name``, registered as a secret; None when unset or empty."""
    value = os.environ.get(name) or None
    register(value)
    return value


def redact(text: str) -> str:
    """``text`` with every registered secret (in any registered form) replaced by ``***``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def redact_url(url: str) -> str:
    """A URL fit to print: credentials masked, even ones nobody registered."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    if parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        url = parts._replace(netloc=f"{parts.username or ''}:{MASK}@{host}").geturl()
    return redact(url)


_URL_WITH_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/@'\"]+:[^\s/@'\"]*@[^\s'\"]+", re.I)
_PASSWORD_SETTING = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'\";]+)", re.I)


def mask_text(text: str) -> str:
    """``text`` fit for anyone to read: registered secrets, credentials in URLs and
    ``password=`` settings of connection strings masked (a connection string quoted by a
    driver's error may hold a password nobody registered)."""
    text = _URL_WITH_CREDENTIALS.sub(lambda m: redact_url(m.group(0)), redact(text))
    return _PASSWORD_SETTING.sub(r"\1***", text)
