"""The values every query module shares: the page size of detail tables, the Overview's
filters and the key of one scored sample. A module of their own so the query modules
(``queries`` and the per-page ones it re-exports) need not import each other."""

from __future__ import annotations

from dataclasses import dataclass

PAGE_SIZE = 50
"""Rows per page of every paginated detail table."""


@dataclass(frozen=True)
class Filters:
    """Overview filters; ``None`` means "every value"."""

    candidate: str | None = None
    """One candidate of a multi-candidate run."""
    providers: tuple[str, ...] | None = None
    """AI providers to keep."""
    tag: str | None = None
    """Keep only samples carrying this tag."""

    def params(self) -> dict[str, object]:
        """The bound parameters of the filter clause shared by the Overview queries."""
        return {
            "candidate": self.candidate,
            "providers": list(self.providers) if self.providers else None,
            "tag": self.tag,
        }


@dataclass(frozen=True)
class SampleRef:
    """One scored sample: the key every per-sample table carries."""

    run_id: str
    """Run id."""
    sample_id: str
    """Test-case id."""
    iteration: int = 1
    """Iteration number."""
    candidate: str = ""
    """Candidate id (empty for single-candidate runs)."""

    def params(self) -> dict[str, object]:
        """The bound parameters of the per-sample queries."""
        return {
            "run_id": self.run_id,
            "sample_id": self.sample_id,
            "iteration": self.iteration,
            "candidate": self.candidate,
        }
