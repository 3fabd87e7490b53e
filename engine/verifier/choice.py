"""Which claim verifier a run uses: the shipped cross-encoder (the default), the local judge's
own rules and combiner (``--verifier rules``), or a grounding model over HTTP
(``--verifier openai:MODEL`` / ``ollama:MODEL``).

Every verifier answers the same question the same way: for (evidence, claim) pairs, the
probabilities of (supported, contradicted, not supported). The local judge still finds the
candidate evidence with the embedder; a verifier given to it decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from engine.errors import InputError

RULES = "rules"
"""Cosine thresholds, contradiction rules and the local judge's learned combiner decide."""
CROSSENCODER = "crossencoder"
"""The default: the cross-encoder trained with ``training/verifier`` and shipped in
``engine/verifier/data`` (docs/verifier.md)."""
LOCAL_VERIFIERS = frozenset({RULES, CROSSENCODER})
"""Verifiers that compute in this process rather than call a server."""


class ClaimVerifier(Protocol):
    """(evidence, claim) -> P(supported, contradicted, not_supported), rows summing to 1."""

    @property
    def name(self) -> str:
        """The verifier's spec, recorded with the run (``ollama:bespoke-minicheck``)."""
        ...

    @property
    def pays_per_pair(self) -> bool:
        """True for a verifier that costs a call per pair (a server): it reads one window per
        claim, the claim's most relevant sentences together, instead of several."""
        ...

    def predict(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """One row of three probabilities per pair."""
        ...


class VerifierSpecError(InputError):
    """``--verifier`` names no verifier this version knows (exit 2, one line)."""


def build_verifier(
    spec: str | None, *, concurrency: int = 8, cache_dir: Path | None = None
) -> ClaimVerifier | None:
    """The verifier named by ``spec``; None (the local judge decides) for None or ``rules``.
    The shipped cross-encoder keeps what it read in ``cache_dir`` (a run's cache folder).
    ``VerifierSpecError`` names the accepted specs."""
    if spec is None or spec.strip() in ("", RULES):
        return None
    if spec.strip() == CROSSENCODER:
        from engine.verifier.model import CrossEncoderVerifier, VerifierError

        local = CrossEncoderVerifier(cache_dir=cache_dir)
        try:
            local.version  # noqa: B018 - checks the model file is there, before the run
        except VerifierError as exc:
            raise VerifierSpecError(
                f"--verifier {CROSSENCODER}: {exc}; reinstall evalhouse (the model ships in "
                "the package) or train one with make train-verifier (docs/verifier.md)"
            ) from None
        return local
    from engine.verifier.remote import RemoteVerifier

    try:
        return RemoteVerifier(spec, concurrency=concurrency)
    except ValueError as exc:
        raise VerifierSpecError(f"--verifier: {exc}") from None
