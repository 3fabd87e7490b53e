"""The one way evalhouse opens a shipped ONNX model (the embedder's, the claim verifier's):
on the CPU, with the thread count its caller chose."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(model_path: Path, threads: int) -> Any:
    """An onnxruntime session over ``model_path`` on ``threads`` intra-op threads. Its
    ``run`` may be called from several threads at once."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: they raise anyway
    # Idle pool threads sleep rather than spin: on shared busy cores spinning burned ~25%
    # more CPU for the same outputs (bit-identical either way).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(
        str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
    )
