"""Base of every model: the literal types and ``Frozen``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Importance = Literal["required", "expected", "optional"]
Tier = Literal["excellent", "good", "fair", "poor"]
Verdict = Literal["SUPPORTED", "CONTRADICTED", "NOT_ENOUGH_INFO"]
AttributionType = Literal["url", "domain", "brand"]
ClaimStatus = Literal["found", "contradicted", "missing"]
ClaimsSource = Literal["given", "derived"]
RunStatus = Literal["running", "paused", "completed", "failed", "cancelled", "interrupted"]

ANALYZER_METRICS: tuple[str, ...] = ("accuracy", "completeness", "attribution")
"""The response analyzer's metrics (0-100, each with a ``<metric>_tier``), in the order every
table, view and page shows them. The SQL files spell them out; a test checks they agree."""


class Frozen(BaseModel):
    """Base for every model: immutable, and unknown fields are an error, not ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
