"""Scorers of one sample behind one contract (``engine.scorers.base.Scorer``).

Importing this package registers the built-in kinds, in the order their outcomes are
merged: the response analyzer, the judge (rubric, claim verdicts, RAG metrics), graders,
retrieval metrics, tool-call metrics.
"""

from engine.scorers import analyzer, conversation, graders, judge, retrieval, tools
from engine.scorers.base import (
    NO_CALLS,
    BaseScorer,
    CallEstimate,
    SampleInput,
    ScoreOutcome,
    Scorer,
    ScorerContext,
    ScorerError,
    ScorerFactory,
)
from engine.scorers.registry import SCORERS, register, unregister

__all__ = [
    "NO_CALLS",
    "SCORERS",
    "BaseScorer",
    "CallEstimate",
    "SampleInput",
    "ScoreOutcome",
    "Scorer",
    "ScorerContext",
    "ScorerError",
    "ScorerFactory",
    "analyzer",
    "conversation",
    "graders",
    "judge",
    "register",
    "retrieval",
    "tools",
    "unregister",
]
