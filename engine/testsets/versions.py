"""Test-set versions: the key of a test set's content, its lake rows, and what changed
between two versions.

A version is a distinct content of a test set with one name: its cases' ids and canonical
JSON (``case_hash``), not the file's layout, so reordering rows or reformatting the file
keeps the version and editing one field of one case makes a new one. The warehouse numbers
the versions of a name in the order they were first run (view ``testset_versions``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.models import TestCase, TestSetCaseRecord
from engine.testsets import case_hash


def cases_hash(cases: Iterable[TestCase]) -> str:
    """sha256 of a test set's cases: each case's id and content hash, in id order."""
    lines = sorted(f"{case.id}\t{case_hash(case)}" for case in cases)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def version_case_records(
    run_id: str, name: str, cases: Sequence[TestCase]
) -> list[TestSetCaseRecord]:
    """The ``testset_cases`` lake rows of a run: every case of the test set it loaded."""
    key = cases_hash(cases)
    return [
        TestSetCaseRecord(
            run_id=run_id,
            test_set_name=name,
            cases_hash=key,
            sample_id=case.id,
            sample_hash=case_hash(case),
            case_json=json.dumps(case.model_dump(mode="json"), ensure_ascii=False),
        )
        for case in cases
    ]


@dataclass(frozen=True)
class ChangedCase:
    """A case in both versions whose content differs, with the fields that differ."""

    sample_id: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class VersionDiff:
    """What changed from one version of a test set to another, by case id."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[ChangedCase, ...]
    unchanged: int

    @property
    def same(self) -> bool:
        """True when the two versions hold the same cases."""
        return not (self.added or self.removed or self.changed)


def _fields(case_json: str) -> dict[str, object]:
    value = json.loads(case_json)
    return value if isinstance(value, dict) else {"case": value}


def diff_cases(old: Mapping[str, str], new: Mapping[str, str]) -> VersionDiff:
    """Added, removed and changed cases from ``old`` to ``new`` (case id -> case JSON); a
    changed case names every top-level field whose value differs (one missing on one side
    counts as differing)."""
    changed: list[ChangedCase] = []
    unchanged = 0
    for sample_id in sorted(old.keys() & new.keys()):
        before, after = _fields(old[sample_id]), _fields(new[sample_id])
        fields = tuple(
            name
            for name in sorted(before.keys() | after.keys())
            if before.get(name) != after.get(name)
        )
        if fields:
            changed.append(ChangedCase(sample_id, fields))
        else:
            unchanged += 1
    return VersionDiff(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(changed),
        unchanged=unchanged,
    )
