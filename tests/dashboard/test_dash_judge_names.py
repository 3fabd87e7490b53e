"""Judges as product pages name them: one readable name, the version kept apart."""

from __future__ import annotations

import pytest

from dashboard.formats import NA, judge_name, judge_shift, judge_version


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("local", "Local judge"),
        ("local@local-v2+rules-v4+lr1+cr1@verifier:nli-v3", "Local judge"),
        ("openai:gpt-4o-mini", "gpt-4o-mini (OpenAI)"),
        ("openai:gpt-4o-mini@v3-1a2b3c-batched", "gpt-4o-mini (OpenAI)"),
        ("anthropic:claude-3-5-haiku@v3", "claude-3-5-haiku (Anthropic)"),
        ("ollama:llama3.1:8b@-", "llama3.1:8b (Ollama)"),
        ("openai:gpt-4o,anthropic:claude-x@v3", "gpt-4o (OpenAI) + claude-x (Anthropic)"),
        ("acme:judge-1", "judge-1 (acme)"),
        (None, NA),
    ],
)
def test_judge_name(label: str | None, name: str) -> None:
    assert judge_name(label) == name


def test_judge_version_is_what_follows_the_first_at() -> None:
    assert judge_version("local@local-v2+rules-v4+lr1+cr1@verifier:x") == (
        "local-v2+rules-v4+lr1+cr1@verifier:x"
    )
    assert judge_version("openai:gpt-4o-mini@-") == ""
    assert judge_version("local") == ""


def test_judge_shift_names_a_prompt_only_change() -> None:
    assert judge_shift("local@local-v1", "openai:x@v3") == "Local judge → x (OpenAI)"
    assert judge_shift("local@local-v1", "local@local-v2") == "Local judge, new version"
