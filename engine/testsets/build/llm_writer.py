"""The LLM question writer of ``testset from-pages --judge openai:MODEL`` (or another LLM).

Each draft of the offline generator (style, chunks, facts) becomes one chat call through
the judges' HTTP client (``engine.judges.http.client``): retries, the reply cache (a
second generation over the same pages costs nothing), token costs and the one repair
attempt come with it. The claims and ground-truth chunks stay the page's own: the model
only words the question and the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engine.judges.base import JudgeError, JudgeResponseError, Usage
from engine.judges.http.client import HttpJudgeClient
from engine.judges.http.prompt import load_prompt
from engine.pricing import model_prices
from engine.scorers.base import CallEstimate
from engine.scorers.judge import JUDGE_OUTPUT_TOKENS, PROMPT_OVERHEAD_TOKENS, tokens
from engine.testsets.build.generate import Draft, with_question

PROMPT = "write_test_case"
INSTRUCTIONS: dict[str, str] = {
    "simple": "A direct question answered by one fact of the passage.",
    "reasoning": "A question whose answer must connect the facts and explain why they "
    "matter together (not just list them).",
    "multi-context": "A question that needs BOTH passages to answer; neither alone is enough.",
    "adversarial": "A question built on the FALSE premise given as the draft; the answer "
    "must correct the premise from the passages.",
    "out-of-scope": "A question the passages cannot answer; the answer must say the sources "
    "do not say, without guessing.",
}


def guidance(instructions: str) -> str:
    """The prompt's line for the user's ``--instructions`` (empty without any)."""
    text = " ".join(instructions.split())
    if not text:
        return ""
    return f"\nWHAT THE PERSON BUILDING THIS TEST SET ASKS FOR (follow it):\n{text}\n"


def _values(draft: Draft, instructions: str = "") -> dict[str, str]:
    passages = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(draft.chunks, start=1))
    return {
        "style": draft.style,
        "instructions": INSTRUCTIONS[draft.style],
        "guidance": guidance(instructions),
        "passages": passages,
        "facts": "\n".join(f"- {text}" for text, _ in draft.claims),
        "draft": draft.question,
    }


def _parse(payload: Any) -> tuple[str, str]:
    if not isinstance(payload, dict):
        raise JudgeResponseError("expected a JSON object with question and answer")
    question, answer = payload.get("question"), payload.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise JudgeResponseError("'question' is missing or empty")
    if not isinstance(answer, str) or not answer.strip():
        raise JudgeResponseError("'answer' is missing or empty")
    return question.strip(), answer.strip()


class LlmWriter:
    """Rewrites drafts' questions and answers with a chat model."""

    def __init__(
        self, client: HttpJudgeClient, *, concurrency: int = 4, instructions: str = ""
    ) -> None:
        self.client = client
        self.instructions = instructions
        self.name = f"{client.wire.provider}:{client.model}"
        self.concurrency = concurrency
        self.usage = Usage()

    async def _write_all(self, drafts: Sequence[Draft]) -> tuple[list[Draft], list[str]]:
        prompt = load_prompt(PROMPT)
        gate = asyncio.Semaphore(self.concurrency)

        async def one(draft: Draft) -> Draft | str:
            async with gate:
                try:
                    (question, answer), usage = await self.client.complete_json(
                        prompt, _values(draft, self.instructions), _parse
                    )
                except JudgeError as exc:
                    return f"{draft.style} draft {draft.question!r}: {exc}"
            self.usage = self.usage + usage
            return with_question(draft, question, answer, self.name)

        try:
            done = await asyncio.gather(*(one(d) for d in drafts))
        finally:
            await self.client.aclose()
        return [d for d in done if isinstance(d, Draft)], [d for d in done if isinstance(d, str)]

    def rewrite(self, drafts: list[Draft]) -> tuple[list[Draft], list[str]]:
        """The drafts as the model wrote them, and one line per draft it could not write."""
        return asyncio.run(self._write_all(drafts))


def estimate_writing(
    drafts: Sequence[Draft], spec: str, prices: Any = None, instructions: str = ""
) -> CallEstimate:
    """One call per draft: instructions, passages and facts in; a short JSON object out."""
    price_in, price_out = model_prices(spec, prices)
    total = CallEstimate()
    for draft in drafts:
        values = _values(draft, instructions)
        sent = PROMPT_OVERHEAD_TOKENS + sum(tokens(v) for v in values.values())
        cost = (sent * price_in + JUDGE_OUTPUT_TOKENS * price_out) / 1e6
        total = total + CallEstimate(1, sent, JUDGE_OUTPUT_TOKENS, cost)
    return total
