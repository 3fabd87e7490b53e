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
RunStatus = Literal["running", "completed", "failed", "cancelled", "interrupted"]


class Frozen(BaseModel):
    """Base for every model: immutable, and unknown fields are an error, not ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
