"""A loopback sign-in proxy for browser tests: what oauth2-proxy does once a user signed in.

It forwards every HTTP request and the WebSocket to the dashboard, with the operator's
user header set to the one user this proxy signed in, and drops any value of that header
the browser sent (a real proxy must: otherwise anyone could name themselves). A browser
cannot add the header itself: Chromium sends no extra headers on a WebSocket handshake,
which is where Streamlit reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import aiohttp
from aiohttp import web

from tests.dashboard.serve import free_port

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "content-encoding",
    "host",
}


def _app(upstream: str, header: str, user: str) -> web.Application:
    def headers(request: web.Request) -> dict[str, str]:
        out = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        out = {k: v for k, v in out.items() if k.lower() != header.lower()}
        out = {k: v for k, v in out.items() if not k.lower().startswith("sec-websocket")}
        out[header] = user
        return out

    async def socket(request: web.Request, session: aiohttp.ClientSession) -> web.StreamResponse:
        protocols = [
            p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p
        ]
        client = web.WebSocketResponse(protocols=protocols)
        await client.prepare(request)
        async with session.ws_connect(
            upstream + request.path_qs, headers=headers(request), protocols=protocols
        ) as server:

            async def pipe(source: Any, sink: Any) -> None:
                async for message in source:
                    if message.type == aiohttp.WSMsgType.BINARY:
                        await sink.send_bytes(message.data)
                    elif message.type == aiohttp.WSMsgType.TEXT:
                        await sink.send_str(message.data)
                    else:
                        break

            _, pending = await asyncio.wait(
                [
                    asyncio.create_task(pipe(client, server)),
                    asyncio.create_task(pipe(server, client)),
                ],
                return_when=asyncio.FIRST_COMPLETED,
            )
            for task in pending:
                task.cancel()
        await client.close()
        return client

    async def forward(request: web.Request) -> web.StreamResponse:
        session: aiohttp.ClientSession = request.app["session"]
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await socket(request, session)
        async with session.request(
            request.method,
            upstream + request.path_qs,
            headers=headers(request),
            data=await request.read() if request.can_read_body else None,
            allow_redirects=False,
        ) as reply:
            body = await reply.read()
            response = web.Response(status=reply.status, body=body)
            for key, value in reply.headers.items():
                if key.lower() not in _HOP_BY_HOP:
                    response.headers.add(key, value)
            return response

    async def open_session(app: web.Application) -> None:
        app["session"] = aiohttp.ClientSession(auto_decompress=True)

    async def close_session(app: web.Application) -> None:
        await app["session"].close()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    app.on_startup.append(open_session)
    app.on_cleanup.append(close_session)
    return app


@contextlib.contextmanager
def sign_in_proxy(upstream: str, header: str, user: str) -> Iterator[str]:
    """A proxy on a free loopback port that signs every request in as ``user``; yields
    its URL."""
    port = free_port()
    started = threading.Event()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(_app(upstream, header, user), shutdown_timeout=1.0)

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(Exception):  # open sockets of a closed browser
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
