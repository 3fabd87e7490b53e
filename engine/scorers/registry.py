"""Which kinds of scorer a run builds: one ``ScorerFactory`` each, in registration order.

The built-ins (response analyzer, judge, graders) register themselves when
``engine.scorers`` is imported. A new kind registers with ``register(ScorerFactory(...))``
and is then built for every run whose settings it applies to, and counted in estimates.
"""

from __future__ import annotations

from engine.scorers.base import ScorerFactory

SCORERS: dict[str, ScorerFactory] = {}
"""Registered kinds of scorer by name, in registration order."""


def register(factory: ScorerFactory) -> ScorerFactory:
    """Add a kind of scorer; a name may be registered once."""
    if factory.name in SCORERS:
        raise ValueError(f"a scorer named {factory.name!r} is registered already")
    SCORERS[factory.name] = factory
    return factory


def unregister(name: str) -> None:
    """Remove a kind of scorer (tests that register their own)."""
    SCORERS.pop(name, None)
