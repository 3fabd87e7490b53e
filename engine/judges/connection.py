"""Checking a judge or target before spending: one minimal call with the configured key.

The dashboard's "Test connection" asks the provider of a spec (``openai:MODEL``,
``anthropic:MODEL``, ``ollama:MODEL``) one short question through the same client a run
uses (its base URL and key from the environment, never from a file) and reports the
model's reply or one error line with every secret masked. The whole check has a time
budget; nothing is cached, recorded or written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from engine.judges.base import JudgeError
from engine.secrets import mask_text

PING_TEXT = "Reply with the single word OK."
"""What the check asks: a reply of a token or two costs next to nothing."""
PING_MAX_TOKENS = 16
"""Output tokens the check allows the model."""
DEFAULT_BUDGET_S = 20.0
"""Total time a check may take, retries included (it makes none)."""
LINE_CHARS = 300
"""How much of a reply or an error the check shows."""
NO_CONNECTION = ("local", "recorded")
"""Specs that call no provider: nothing to check."""


@dataclass(frozen=True)
class ConnectionCheck:
    """What a connection check found."""

    spec: str
    """The judge or target spec that was checked."""
    ok: bool
    """Whether the provider answered."""
    line: str
    """The model's reply, or why it did not answer (one line, secrets masked)."""


def _one_line(text: str) -> str:
    line = " ".join(mask_text(text).split())
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


async def _ask(spec: str, budget_s: float) -> str:
    from engine.judges.factory import build_llm_judge
    from engine.judges.http.judge import HttpJudge

    judge = build_llm_judge(spec, cache_dir=None, max_retries=0, timeout=budget_s)
    assert isinstance(judge, HttpJudge)
    client = judge.client
    client.max_tokens = PING_MAX_TOKENS
    try:
        reply = await client.say(PING_TEXT)
    finally:
        await client.aclose()
    return reply.content


def check_connection(spec: str, *, budget_s: float = DEFAULT_BUDGET_S) -> ConnectionCheck:
    """Ask ``spec``'s model one short question within ``budget_s`` seconds. Never raises
    for what a provider or the environment does: every failure is the result's line."""
    spec = spec.strip()
    if spec in NO_CONNECTION:
        return ConnectionCheck(spec, True, f"{spec} calls no provider: nothing to check")
    if spec.startswith(("http:", "https:")):
        return ConnectionCheck(
            spec, False, "an HTTP endpoint is checked by a run of one sample, not a chat call"
        )
    try:
        content = asyncio.run(asyncio.wait_for(_ask(spec, budget_s), timeout=budget_s))
    except TimeoutError:
        return ConnectionCheck(spec, False, f"no answer within {budget_s:.0f} s")
    except JudgeError as exc:
        return ConnectionCheck(spec, False, _one_line(str(exc)))
    except Exception as exc:  # a check must report, never crash the page that asked
        return ConnectionCheck(spec, False, _one_line(f"{type(exc).__name__}: {exc}"))
    reply = _one_line(content)
    return ConnectionCheck(spec, True, reply or "(the model answered with no text)")
