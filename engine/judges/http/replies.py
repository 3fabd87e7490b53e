"""Replies of an LLM judge checked against what each prompt asks for: a reply that does
not fit is an error (``JudgeResponseError``), never a guess."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from engine.judges.base import (
    JudgeResponseError,
    RubricScore,
)
from engine.models import Verdict

log = logging.getLogger("engine.judges.http")

_VERDICTS: dict[str, Verdict] = {v: v for v in ("SUPPORTED", "CONTRADICTED", "NOT_ENOUGH_INFO")}


def _object(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise JudgeResponseError("expected a JSON object")
    return payload


def normalise_verdict(raw: Any) -> Verdict:
    """Upper-case a verdict (``supported``, ``not enough info`` ...); anything else is an
    error, never a guess."""
    if not isinstance(raw, str):
        raise JudgeResponseError(f"invalid verdict {raw!r}")
    value = re.sub(r"[\s\-]+", "_", raw.strip()).upper()
    verdict = _VERDICTS.get(value)
    if verdict is None:
        raise JudgeResponseError(
            f"invalid verdict {raw!r}: expected SUPPORTED, CONTRADICTED or NOT_ENOUGH_INFO"
        )
    return verdict


def _score(raw: Any, field: str) -> float:
    if isinstance(raw, bool):
        raise JudgeResponseError(f"{field}: score must be a number 1-5")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise JudgeResponseError(f"{field}: score must be a number 1-5, got {raw!r}") from None
    if not 1.0 <= value <= 5.0:
        raise JudgeResponseError(f"{field}: score {value:g} is outside 1-5")
    return value


def _reasoning(obj: dict[str, Any]) -> str:
    value = obj.get("reasoning", "")
    return value if isinstance(value, str) else json.dumps(value)


def parse_claims(payload: Any) -> list[str]:
    """``{"claims": [str, ...]}`` -> claims."""
    claims = _object(payload).get("claims")
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise JudgeResponseError('expected {"claims": [strings]}')
    return [c.strip() for c in claims if c.strip()]


def parse_verdict(payload: Any) -> tuple[Verdict, str]:
    """``{"verdict": ..., "evidence": ...}`` -> (verdict, evidence)."""
    obj = _object(payload)
    if "verdict" not in obj:
        raise JudgeResponseError('expected {"verdict": ..., "evidence": ...}')
    evidence = obj.get("evidence", "")
    return normalise_verdict(obj["verdict"]), evidence if isinstance(evidence, str) else ""


def parse_rubric(payload: Any) -> tuple[RubricScore, RubricScore]:
    """``{"faithfulness": {score, reasoning}, "completeness": {...}}``."""
    obj = _object(payload)
    out = []
    for field in ("faithfulness", "completeness"):
        part = obj.get(field)
        if not isinstance(part, dict):
            raise JudgeResponseError(f'expected "{field}": {{"score": 1-5, "reasoning": "..."}}')
        out.append(RubricScore(score=_score(part.get("score"), field), reasoning=_reasoning(part)))
    return out[0], out[1]


def parse_metric(payload: Any) -> tuple[float, str]:
    """``{"score": 1-5, "reasoning": ...}``."""
    obj = _object(payload)
    return _score(obj.get("score"), "score"), _reasoning(obj)


def parse_chunk_use(payload: Any) -> tuple[bool, str]:
    """``{"used": bool, "reasoning": ...}``."""
    obj = _object(payload)
    used = obj.get("used")
    if isinstance(used, str) and used.strip().lower() in ("true", "false"):
        used = used.strip().lower() == "true"
    if not isinstance(used, bool):
        raise JudgeResponseError('expected {"used": true|false, "reasoning": "..."}')
    return used, _reasoning(obj)
