"""The learned claim verifier: a MiniLM-L6 cross-encoder run as int8 ONNX.

``CrossEncoderVerifier.predict`` maps (evidence, claim) pairs to calibrated probabilities of
(supported, contradicted, not_supported); ``select_evidence`` picks the evidence window it reads.
Importing this package loads no model (the session is created on the first ``predict``).
"""

from engine.verifier.evidence import evidence_for_document, select_evidence, split_passages
from engine.verifier.model import (
    LABELS,
    CrossEncoderVerifier,
    VerifierError,
    default_verifier,
)

__all__ = [
    "LABELS",
    "CrossEncoderVerifier",
    "VerifierError",
    "default_verifier",
    "evidence_for_document",
    "select_evidence",
    "split_passages",
]
