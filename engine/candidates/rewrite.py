"""LLM-worded variants: a rule-based draft reworded by a model (``vary --judge``).

The call goes through the judges' HTTP client (``HttpJudgeClient.complete_json``): the
same retries, key handling and cost, and the same disk cache in the home, so a re-run of
``vary`` whose variants are gone asks nothing new. The prompt is versioned like the
judges' prompt files; its id is part of the cache key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.candidates.edits import Edit
from engine.candidates.templates import template_variables, unknown_variables
from engine.judges.base import JudgeError
from engine.judges.factory import build_llm_judge
from engine.judges.http.client import HttpJudgeClient
from engine.judges.http.prompt import Prompt

REWRITE_PROMPT = Prompt(
    name="candidate-rewrite",
    version="v1",
    system=(
        "You edit system prompts of an AI assistant. You receive an original prompt, the "
        "edit to make and a mechanical draft of the edited prompt. Return the draft "
        "reworded so it reads naturally, making exactly that edit and nothing else. Keep "
        "every placeholder in double curly braces exactly as written and add none. "
        'Reply with JSON only: {"prompt": "<the edited prompt>"}.'
    ),
    user="Original prompt:\n{{original}}\n\nEdit:\n{{edit}}\n\nDraft:\n{{draft}}",
)
"""The rewrite prompt; bump ``version`` when its wording changes (cached replies then
are not reused)."""


class LlmRewriter:
    """Rewords variant drafts with an LLM: one cached JSON call per variant."""

    def __init__(self, spec: str, client: HttpJudgeClient) -> None:
        self.spec = spec
        self.client = client

    async def word(self, original: str, draft: str, edit: Edit) -> str:
        """The draft reworded; its placeholders must be the draft's (checked, repaired
        once by the client, else JudgeResponseError)."""
        wanted = set(template_variables(draft))

        def validate(payload: Any) -> str:
            text = payload.get("prompt") if isinstance(payload, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise ValueError('the reply needs a non-empty "prompt" string')
            if unknown_variables(text) or set(template_variables(text)) != wanted:
                raise ValueError(f"the prompt must keep exactly the placeholders {sorted(wanted)}")
            return text.strip()

        values = {
            "original": original,
            "edit": json.dumps({k: v for k, v in edit.items() if k != "worded_by"}),
            "draft": draft,
        }
        text, _ = await self.client.complete_json(REWRITE_PROMPT, values, validate)
        return text

    async def aclose(self) -> None:
        """Close the client; its cache entries reach disk."""
        await self.client.aclose()


def build_rewriter(spec: str, cache_dir: Path) -> LlmRewriter:
    """The rewriter of ``--judge spec`` (``openai:MODEL``, ``ollama:MODEL``,
    ``anthropic:MODEL``). Raises JudgeError for ``local`` or a spec that cannot be built."""
    if spec.strip() == "local":
        raise JudgeError("local has no model to word variants; use openai:MODEL or ollama:MODEL")
    judge = build_llm_judge(spec, cache_dir=cache_dir, concurrency=4)
    return LlmRewriter(spec.strip(), judge.client)
