"""Versioned prompt files of the HTTP judges, and the one call every judge call goes through.

A prompt is ``prompts/<name>.<version>.md`` with a ``## system`` and a ``## user`` section;
the files ship as package data next to this module. ``JsonCalls`` is what the judge's call
families (``batched``, ``graded``, ``conversational``) need from a client: one JSON
completion of a prompt, validated. They depend on this protocol, not on the client, so the
client and the judge that mixes them in build on them and never the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from engine.judges.base import Usage

T = TypeVar("T")

PROMPT_DIR = Path(__file__).parent / "prompts"


@dataclass(frozen=True)
class Prompt:
    """A versioned prompt file: ``<name>.<version>.md`` with ``## system`` and ``## user``."""

    name: str
    version: str
    system: str
    user: str

    @property
    def id(self) -> str:
        """``name.version``, part of the cache key."""
        return f"{self.name}.{self.version}"

    def render(self, **values: str) -> tuple[str, str]:
        """(system, user) with ``{{placeholders}}`` filled in one pass (values are not
        re-scanned, so a context that contains ``{{answer}}`` stays literal)."""

        def fill(template: str) -> str:
            return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)

        return fill(self.system), fill(self.user)


def load_prompt(name: str, version: str = "v1") -> Prompt:
    """Read ``prompts/<name>.<version>.md``."""
    text = (PROMPT_DIR / f"{name}.{version}.md").read_text(encoding="utf-8")
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        header = re.fullmatch(r"##\s+(system|user)\s*", line)
        if header:
            current = header.group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return Prompt(
        name=name,
        version=version,
        system="\n".join(sections.get("system", [])).strip(),
        user="\n".join(sections.get("user", [])).strip(),
    )


class JsonCalls(Protocol):
    """One JSON completion of a prompt: what the judge's call families need from a client."""

    async def complete_json(
        self, prompt: Prompt, values: dict[str, str], validate: Callable[[Any], T]
    ) -> tuple[T, Usage]:
        """Ask, parse the JSON reply and validate it; cached replies cost nothing."""
        ...
