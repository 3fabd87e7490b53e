"""``evalhouse candidates vary``: variant files of a candidate, each recording its lineage.

A variant is written next to its parent with the parent's front matter plus ``parent``
(the parent's id) and ``edit`` (``engine.candidates.edits``), and its id is the parent's id
followed by ``-v`` and 8 hex digits of sha256(parent id + canonical edit). So the id says
what the variant is: running ``vary`` again finds the same files and writes nothing, and
two people varying the same prompt the same way get the same candidate.

With ``rewriter`` (an LLM, ``--judge openai:MODEL``) each rule-based draft is reworded
by the model, one call per variant, cached in the home's judge cache; the edit then
records ``worded_by`` so a worded variant never collides with the rule-based one.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from engine.candidates.edits import Edit, apply_edit, edit_label, plan_edits
from engine.candidates.files import (
    CandidateFileError,
    canonical_edit,
    read_candidate_file,
    split_front_matter,
)
from engine.candidates.model import Candidate
from engine.errors import InputError

MAX_VARIANTS = 1000
"""Most variants one ``vary`` writes: beyond this a run over them is not an experiment."""

_DROPPED_FIELDS = ("name", "variant_label", "parent", "edit")
"""Front matter fields of the parent a variant does not inherit (it sets its own)."""


class VaryError(InputError):
    """``vary`` cannot start (bad parent, count or folder); nothing was written."""


class Rewriter(Protocol):
    """Words a rule-based draft of a variant as a person would (one LLM call)."""

    spec: str
    """``provider:model``, recorded in the edit as ``worded_by``."""

    async def word(self, original: str, draft: str, edit: Edit) -> str:
        """The reworded system prompt."""
        ...

    async def aclose(self) -> None:
        """Release connections; the cache's entries reach disk."""
        ...


@dataclass(frozen=True)
class Variant:
    """One planned variant file."""

    id: str
    """Candidate id: ``<parent id>-v<8 hex>``."""
    path: Path
    """Where the file goes (next to the parent)."""
    edit: Edit
    """The edit, as recorded in the front matter."""
    body: str
    """The variant's system prompt."""


@dataclass
class VaryReport:
    """What ``vary`` did."""

    parent: str
    """The parent's candidate id."""
    written: list[Variant] = field(default_factory=list)
    """Variants written now."""
    existing: list[Variant] = field(default_factory=list)
    """Variants whose file was already there (left as they are)."""


def variant_id(parent_id: str, edit: Edit) -> str:
    """The id of the variant of ``parent_id`` made by ``edit``."""
    material = parent_id + "\0" + canonical_edit(edit)
    return f"{parent_id}-v{hashlib.sha256(material.encode()).hexdigest()[:8]}"


def _family_of(path: Path) -> str | None:
    """``candidates/<family>/x.md`` has a family; a file at the top of ``candidates/``
    (or outside any project) has none."""
    return None if path.parent.name == "candidates" else path.parent.name


def _variant_path(parent_path: Path, parent: Candidate, vid: str) -> Path:
    """File of the variant ``vid``: in the parent's folder, named so the loader derives
    ``vid`` (a family's files are ``<family>-<stem>``)."""
    family = _family_of(parent_path)
    stem = vid if family is None else vid.removeprefix(f"{family}-")
    return parent_path.parent / f"{stem}.md"


def read_parent(path: Path) -> tuple[Candidate, dict[str, Any]]:
    """The parent candidate and its raw front matter. Raises VaryError (one line)."""
    if not path.is_file():
        raise VaryError(f"{path}: no such candidate file")
    try:
        parent = read_candidate_file(path, _family_of(path))
    except CandidateFileError as err:
        first = err.problems[0] if err.problems else err
        raise VaryError(f"{path} is not a valid candidate file: {first}") from None
    if parent.runner != "llm_prompt" or not parent.system_prompt:
        raise VaryError(f"{path}: only llm_prompt candidates with a prompt body can be varied")
    parts = split_front_matter(path.read_text(encoding="utf-8"))
    raw = (yaml.safe_load(parts[0]) if parts else None) or {}
    return parent, dict(raw)


def check_writable(folder: Path) -> None:
    """Refuse a folder ``vary`` cannot write to, before any call. Raises VaryError."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".vary-", suffix=".tmp"):
            pass
    except OSError as err:
        raise VaryError(f"{folder} is not writable: {err.strerror or err}") from None


def _front_matter(raw: dict[str, Any], parent: Candidate, edit: Edit) -> str:
    label = edit_label(edit)
    head: dict[str, Any] = {
        "name": f"{parent.name} · {label}",
        "variant_label": label,
        "parent": parent.id,
        "edit": edit,
    }
    head.update({k: v for k, v in raw.items() if k not in _DROPPED_FIELDS})
    return yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=100)


def _write(variant: Variant, raw: dict[str, Any], parent: Candidate) -> None:
    text = f"---\n{_front_matter(raw, parent, variant.edit)}---\n{variant.body}\n"
    tmp = variant.path.with_name(f".{variant.path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, variant.path)


def plan_variants(
    path: Path, parent: Candidate, count: int, seed: int, worded_by: str | None = None
) -> list[Variant]:
    """The variants ``vary`` would write, rule-based bodies (not yet reworded)."""
    try:
        edits = plan_edits(parent.system_prompt, count, seed)
    except ValueError as err:
        raise VaryError(f"--count {count}: {err}") from None
    out = []
    for edit in edits:
        recorded = {**edit, "worded_by": worded_by} if worded_by else edit
        vid = variant_id(parent.id, recorded)
        body = apply_edit(parent.system_prompt, edit)
        out.append(Variant(vid, _variant_path(path, parent, vid), recorded, body))
    return out


async def _reword(rewriter: Rewriter, original: str, todo: Sequence[Variant]) -> list[Variant]:
    try:
        bodies = await asyncio.gather(*(rewriter.word(original, v.body, v.edit) for v in todo))
    finally:
        await rewriter.aclose()
    return [Variant(v.id, v.path, v.edit, body) for v, body in zip(todo, bodies, strict=True)]


def vary(path: Path, count: int, *, seed: int = 0, rewriter: Rewriter | None = None) -> VaryReport:
    """Write ``count`` variants of the candidate file ``path`` next to it.

    Deterministic for a seed; variants already on disk are kept and not asked for again.
    Raises VaryError for a missing or invalid parent, a count out of range or a folder
    that cannot be written, before anything is written or called.
    """
    if not 1 <= count <= MAX_VARIANTS:
        raise VaryError(f"--count {count}: use 1 to {MAX_VARIANTS}")
    parent, raw = read_parent(path)
    check_writable(path.parent)
    planned = plan_variants(path, parent, count, seed, rewriter.spec if rewriter else None)
    report = VaryReport(parent=parent.id)
    report.existing = [v for v in planned if v.path.exists()]
    todo = [v for v in planned if not v.path.exists()]
    if rewriter is not None:
        todo = asyncio.run(_reword(rewriter, parent.system_prompt, todo))
    for variant in todo:
        _write(variant, raw, parent)
    report.written = todo
    return report
