"""The ``recorded`` target: the response stored in the test set."""

from __future__ import annotations

from engine.models import TestCase
from engine.targets.base import TargetError, TargetResponse


class RecordedTarget:
    """Answers with the case's own ``response``; a case without one is an error row."""

    @property
    def name(self) -> str:
        """Always ``recorded``."""
        return "recorded"

    async def respond(self, case: TestCase) -> TargetResponse:
        """The recorded response; ``TargetError`` when the case has none."""
        if case.response is None:
            raise TargetError(
                f"case {case.id!r} has no recorded response; add 'response' to the test set "
                "or run with a target (--target openai:MODEL or http:URL)"
            )
        return TargetResponse(
            text=case.response, contexts=case.context, context_ids=case.retrieved_context_ids
        )

    async def aclose(self) -> None:
        """Nothing to release."""
