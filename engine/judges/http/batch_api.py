"""The OpenAI Batch API, spoken over the one send-with-retries of :mod:`engine.http`.

Four calls: upload a JSONL file of requests (``POST /v1/files``, multipart, purpose
``batch``), create a batch over it (``POST /v1/batches``), read its status
(``GET /v1/batches/{id}``) and download a result file (``GET /v1/files/{id}/content``).
Each request has the client's time limit and retries; a result file may be far larger
than a chat reply, so its reply-size cap is :data:`RESULT_FILE_MAX_BYTES` rather than the
HTTP layer's default. The API key travels in a header only; every error text is masked
(:mod:`engine.secrets`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from engine.http import HttpReply, HttpSession, RetryPolicy, SendError, send_with_retries

T = TypeVar("T")

CHAT_ENDPOINT = "/v1/chat/completions"
"""The endpoint every line of a judge's batch asks (the ``url`` of a line)."""
COMPLETION_WINDOW = "24h"
"""The only completion window the Batch API offers."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
"""Batch statuses after which nothing more will be answered."""
RESULT_FILE_MAX_BYTES = 512 * 1024 * 1024
"""Largest result file read: a batch of ``BATCH_MAX_PROMPTS`` judge replies stays far
below it; a larger body fails the download (its lines then go live)."""


@dataclass(frozen=True)
class BatchStatus:
    """What ``GET /v1/batches/{id}`` says of a batch."""

    id: str
    status: str
    """validating, in_progress, finalizing, completed, failed, expired, cancelling or
    cancelled."""
    output_file_id: str | None = None
    """Lines that were answered (also present on an expired or cancelled batch)."""
    error_file_id: str | None = None
    """Lines that failed."""

    @property
    def done(self) -> bool:
        """Whether the batch reached a terminal status."""
        return self.status in TERMINAL


def _status(payload: Any) -> BatchStatus:
    if not isinstance(payload, dict) or not isinstance(payload.get("id"), str):
        raise ValueError("not a batch object")
    output, errors = payload.get("output_file_id"), payload.get("error_file_id")
    return BatchStatus(
        id=payload["id"],
        status=str(payload.get("status", "")),
        output_file_id=output if isinstance(output, str) and output else None,
        error_file_id=errors if isinstance(errors, str) and errors else None,
    )


def _jsonl(reply: HttpReply) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in reply.content.splitlines() if line.strip()]
    return [row for row in rows if isinstance(row, dict)]


class BatchApi:
    """The batch endpoints of one OpenAI-compatible base URL."""

    def __init__(
        self,
        http: HttpSession,
        base_url: str,
        headers: Mapping[str, str],
        policy: Callable[[], RetryPolicy],
        label: str,
    ) -> None:
        base = base_url.rstrip("/")
        self._base = base if base.endswith("/v1") else f"{base}/v1"
        self._http = http
        self._headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        self._policy = policy
        self.label = label
        """Names the judge in log lines and errors."""

    async def _send(
        self,
        method: str,
        path: str,
        parse: Callable[[HttpReply], T],
        *,
        content: bytes | None = None,
        content_type: str | None = None,
        max_bytes: int | None = None,
    ) -> T:
        headers = dict(self._headers)
        if content_type is not None:
            headers["content-type"] = content_type
        policy = self._policy()
        if max_bytes is not None:
            policy = replace(policy, max_reply_bytes=max_bytes)
        sent = await send_with_retries(
            self._http,
            f"{self._base}{path}",
            policy=policy,
            parse=parse,
            method=method,
            content=content,
            headers=headers,
            label=f"{self.label} batch",
            retry_unreadable=True,
        )
        return sent.value

    async def upload(self, lines: list[dict[str, Any]]) -> str:
        """Upload the request lines as one JSONL file (purpose ``batch``); its file id."""
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        boundary = f"evalhouse-{uuid.uuid4().hex}"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
                f"--{boundary}\r\nContent-Disposition: form-data; "
                f'name="file"; filename="judge-batch.jsonl"\r\n'
                "Content-Type: application/jsonl\r\n\r\n"
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )
        return await self._send(
            "POST",
            "/files",
            lambda r: str(r.json()["id"]),
            content=body,
            content_type=f"multipart/form-data; boundary={boundary}",
        )

    async def create(self, input_file_id: str) -> BatchStatus:
        """Create the batch over an uploaded file (chat completions, 24 h window)."""
        request = {
            "input_file_id": input_file_id,
            "endpoint": CHAT_ENDPOINT,
            "completion_window": COMPLETION_WINDOW,
        }
        return await self._send(
            "POST",
            "/batches",
            lambda r: _status(r.json()),
            content=json.dumps(request).encode(),
            content_type="application/json",
        )

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's current status and result files."""
        return await self._send("GET", f"/batches/{batch_id}", lambda r: _status(r.json()))

    async def lines(self, file_id: str) -> list[dict[str, Any]]:
        """The JSON lines of a result (output or error) file."""
        return await self._send(
            "GET", f"/files/{file_id}/content", _jsonl, max_bytes=RESULT_FILE_MAX_BYTES
        )


__all__ = ["CHAT_ENDPOINT", "BatchApi", "BatchStatus", "SendError"]
