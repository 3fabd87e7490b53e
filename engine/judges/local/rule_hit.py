"""What a contradiction rule reports when it fires."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleHit:
    """A rule that fired: the claim disagrees with the evidence."""

    rule: str
    """negation, number, unit, date, entity or antonym."""
    detail: str
    """What differs, for people: ``claim says 25, evidence says 20``."""
