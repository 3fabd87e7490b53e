"""The OpenAI Batch API of the loopback server (``tests.loopback_llm``): files, batches and
the controls tests use.

``POST /v1/files`` (multipart: ``purpose=batch`` and a JSONL ``file``), ``POST /v1/batches``
(``input_file_id``, ``endpoint`` /v1/chat/completions, ``completion_window``),
``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content``. A batch ends at the first
status read while not held; each of its lines is then answered by the server's chat
answerer (script, then responder), as the live endpoint would answer it. Output lines are
``{"id", "custom_id", "response": {"status_code", "body"}, "error"}``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TERMINAL = ("completed", "failed", "expired", "cancelled")

Answerer = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]
"""Answers one chat request body: (HTTP status, wire-format body)."""


@dataclass
class _Batch:
    id: str
    lines: list[dict[str, Any]]
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "request_counts": {"total": len(self.lines)},
        }


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _form_fields(raw: bytes, boundary: bytes) -> dict[str, bytes]:
    fields: dict[str, bytes] = {}
    for part in raw.split(b"--" + boundary):
        head, sep, data = part.partition(b"\r\n\r\n")
        if not sep or b'name="' not in head:
            continue
        name = head.split(b'name="', 1)[1].split(b'"', 1)[0]
        fields[name.decode()] = data.removesuffix(b"\r\n")
    return fields


@dataclass
class LoopbackBatches:
    """The Batch API side of the server: files, batches and what tests control."""

    answer: Answerer
    """How one line is answered (the server's chat answerer)."""
    hold: bool = False
    """While True every batch stays ``in_progress`` (a run waiting on it can be stopped)."""
    end: str = "completed"
    """Final status of a batch once not held: completed, failed, expired or cancelled."""
    answered: int | None = None
    """Lines answered before the batch ends (None: all; an expired batch answers some)."""
    fail_line: Callable[[dict[str, Any]], bool] | None = None
    """Lines (as uploaded) that fail with HTTP 500 in the error file."""
    created: int = 0
    """Batches created (``POST /v1/batches``)."""
    uploads: int = 0
    """Files uploaded (``POST /v1/files``)."""
    lines_answered: int = 0
    """Lines answered with a 200, across all batches."""
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, _Batch] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def upload(self, raw: bytes, content_type: str) -> tuple[int, dict[str, Any]]:
        """``POST /v1/files``."""
        if "boundary=" not in content_type:
            return 400, {"error": {"message": "multipart/form-data expected"}}
        boundary = content_type.split("boundary=", 1)[1].strip('"').encode()
        fields = _form_fields(raw, boundary)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, {"error": {"message": "purpose=batch and a file are required"}}
        with self._lock:
            self.uploads += 1
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = fields["file"]
        return 200, {"id": file_id, "object": "file", "purpose": "batch"}

    def create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """``POST /v1/batches``."""
        with self._lock:
            data = self.files.get(str(body.get("input_file_id")))
            if data is None or body.get("endpoint") != "/v1/chat/completions":
                return 400, {"error": {"message": "unknown input file or endpoint"}}
            if body.get("completion_window") != "24h":
                return 400, {"error": {"message": "completion_window must be 24h"}}
            lines = [json.loads(line) for line in data.splitlines() if line.strip()]
            self.created += 1
            batch = _Batch(f"batch_{self.created}", lines)
            self.batches[batch.id] = batch
            return 200, batch.view()

    def status(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        """``GET /v1/batches/{id}``: ends the batch unless held."""
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, {"error": {"message": "no such batch"}}
            if batch.status in TERMINAL:
                return 200, batch.view()
            if self.hold:
                batch.status = "in_progress"
                return 200, batch.view()
            batch.status = "finalizing"  # no second reader finishes it too
        self._finish(batch)
        return 200, batch.view()

    def _finish(self, batch: _Batch) -> None:
        limit = len(batch.lines) if self.answered is None else self.answered
        out: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for i, line in enumerate(batch.lines if self.end != "failed" else []):
            if i >= limit:
                break
            if self.fail_line is not None and self.fail_line(line):
                failed = {"status_code": 500, "body": {"error": {"message": "server_error"}}}
                errors.append({"custom_id": line.get("custom_id"), "response": failed})
                continue
            status, body = self.answer(line["body"])
            row = {"status_code": status, "body": body}
            out.append(
                {"id": f"batch_req_{i}", "custom_id": line.get("custom_id"), "response": row}
            )
        with self._lock:
            self.lines_answered += sum(1 for o in out if o["response"]["status_code"] == 200)
            if out:
                batch.output_file_id = f"file-out-{batch.id}"
                self.files[batch.output_file_id] = _jsonl(out)
            if errors:
                batch.error_file_id = f"file-err-{batch.id}"
                self.files[batch.error_file_id] = _jsonl(errors)
            batch.status = self.end

    def content(self, file_id: str) -> bytes | None:
        """``GET /v1/files/{id}/content``."""
        with self._lock:
            return self.files.get(file_id)
