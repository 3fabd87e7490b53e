"""How a request goes out, as the environment says: proxy, proxy credentials and ``~/.netrc``
credentials per URL, read once per session and URL (aiohttp re-reads the environment and
``~/.netrc`` on every request, in two thread-pool hops, which at 128 calls in flight cost a
fifth of the event loop). Every credential found is registered as a secret.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from yarl import URL

from engine.secrets import register, register_url

if TYPE_CHECKING:
    import aiohttp  # imported by the first request (``engine.http``)


@dataclass(frozen=True)
class Route:
    """How requests to one URL go out, as the environment says (read once per session and
    URL: aiohttp re-reads the environment and ``~/.netrc`` on every request, in two
    thread-pool hops, which at 128 calls in flight cost a fifth of the event loop)."""

    proxy: URL | None
    """``HTTP(S)_PROXY`` for the URL's scheme, unless ``NO_PROXY`` names its host."""
    proxy_auth: aiohttp.BasicAuth | None
    """The proxy's credentials from ``~/.netrc`` (credentials in the proxy URL travel
    with it)."""
    netrc_auth: aiohttp.BasicAuth | None
    """The host's credentials in ``~/.netrc`` (``NETRC``), sent only when the request
    has no ``Authorization`` of its own, as curl does."""
    url_has_credentials: bool


def route_from_environment(url: str) -> Route:
    from aiohttp import helpers as aiohttp_helpers

    parsed = URL(url)
    proxy: URL | None = None
    proxy_auth: aiohttp.BasicAuth | None = None
    with contextlib.suppress(LookupError):
        proxy, proxy_auth = aiohttp_helpers.get_env_proxy_for_url(parsed)
    netrc_auth: aiohttp.BasicAuth | None = None
    if parsed.host is not None and parsed.user is None:
        with contextlib.suppress(LookupError):
            netrc_auth = aiohttp_helpers.basicauth_from_netrc(
                aiohttp_helpers.netrc_from_env(), parsed.host
            )
    # Whatever an error message could quote is masked like an API key.
    register_url(url)
    if proxy is not None:
        register_url(str(proxy))
    for auth in (proxy_auth, netrc_auth):
        if auth is not None:
            register(auth.password)
    return Route(proxy, proxy_auth, netrc_auth, parsed.user is not None)


def request_headers(route: Route, headers: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """Credentials written in the URL are sent as HTTP Basic and win over an
    ``Authorization`` the caller made from a key in the environment (as httpx did): the URL
    is the more specific of the two, and aiohttp refuses a request that has both. A
    ``~/.netrc`` entry is used only by a request that carries no credentials."""
    if route.url_has_credentials:
        if headers is None:
            return None
        return {k: v for k, v in headers.items() if k.lower() != "authorization"}
    if route.netrc_auth is None or (
        headers is not None and any(k.lower() == "authorization" for k in headers)
    ):
        return headers
    return {**(headers or {}), "Authorization": route.netrc_auth.encode()}
