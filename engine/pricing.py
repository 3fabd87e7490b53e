"""Prices of models (judges and targets), in US dollars per million tokens (input, output).

The table is a default; a run can override or extend it (``RunConfig.prices``, or
``--option prices=...``) without a release. Unknown models cost 0.0 (local servers such as Ollama).
Prices as published by the providers in 2025; check before trusting a bill to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-opus-4-1": (15.00, 75.00),
}
"""model name (or prefix) -> (input, output) USD per million tokens."""

BATCH_PRICE_FACTOR = 0.5
"""What a call answered through a provider's Batch API costs, as a fraction of the live
price (OpenAI bills batch input and output tokens at half the synchronous rate)."""


def _pair(value: Any) -> tuple[float, float]:
    if isinstance(value, Mapping):
        return float(value["input"]), float(value["output"])
    if isinstance(value, list | tuple) and len(value) == 2:
        return float(value[0]), float(value[1])
    raise ValueError(f"price must be (input, output) or {{'input': x, 'output': y}}, got {value!r}")


class PriceTable:
    """Looks up a model's prices: exact name first, then the longest matching prefix
    (``claude-3-5-haiku-20241022`` uses ``claude-3-5-haiku``)."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        self._prices = dict(DEFAULT_PRICES)
        for model, value in (overrides or {}).items():
            self._prices[model] = _pair(value)

    def prices(self, model: str) -> tuple[float, float] | None:
        """(input, output) USD per million tokens, or None for an unknown model."""
        if model in self._prices:
            return self._prices[model]
        candidates = [name for name in self._prices if model.startswith(name)]
        if not candidates:
            return None
        return self._prices[max(candidates, key=len)]

    def cost(
        self, model: str, input_tokens: int, output_tokens: int, *, batch: bool = False
    ) -> float:
        """Cost of one call in US dollars (0.0 for unknown models); ``batch``: answered
        through the Batch API, at ``BATCH_PRICE_FACTOR`` of the price."""
        prices = self.prices(model)
        if prices is None:
            return 0.0
        live = (input_tokens * prices[0] + output_tokens * prices[1]) / 1_000_000
        return live * BATCH_PRICE_FACTOR if batch else live


def model_prices(spec: str, overrides: Mapping[str, Any] | None = None) -> tuple[float, float]:
    """(input, output) USD per million tokens of ``provider:model``; (0, 0) when unknown."""
    if ":" not in spec:
        return (0.0, 0.0)
    return PriceTable(overrides).prices(spec.split(":", 1)[1]) or (0.0, 0.0)
