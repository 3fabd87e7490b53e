"""The review step: cases go to a CSV a person edits, then ``accept`` makes the test set.

``write_review`` writes ``review.csv`` (one row per case, the columns a reviewer edits)
and beside it ``review.drafts.jsonl`` (the full native cases: ground-truth texts,
metadata). ``accept_review`` reads the edited CSV: rows whose ``keep`` is no / n / 0 /
false / - are dropped, edited columns replace the draft's values, a row with a new id
and a query is a new case, and the result is checked as a whole before anything is
written (one line per problem: file, line, column, reason).

Columns: keep, id, domain, intent, query, expected_answer, claims (one claim per line;
``optional:`` or ``expected:`` before a claim sets its importance), ground_truth (chunk
ids, one per line; ids of the drafts' chunks), response, notes (ignored).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.errors import InputError
from engine.models import ExpectedAnswer, ExpectedClaim, Importance, TestCase
from engine.outputs import is_stdout, write_output

COLUMNS = (
    "keep",
    "id",
    "domain",
    "intent",
    "query",
    "expected_answer",
    "claims",
    "ground_truth",
    "response",
    "notes",
)
_NO = {"no", "n", "0", "false", "-", "drop", "x"}


class ReviewError(InputError):
    """An edited review file that cannot become a test set."""


def drafts_path(review: Path) -> Path:
    """The sidecar holding the full draft cases of ``review``."""
    return review.with_name(review.stem + ".drafts.jsonl")


def write_jsonl(path: Path, cases: Sequence[TestCase]) -> None:
    """Native JSONL, written to a temporary file first so no half-file is ever left."""
    text = "".join(case.model_dump_json(exclude_none=True) + "\n" for case in cases)
    _atomic(path, text)


def _atomic(path: Path, text: str) -> None:
    if not is_stdout(path):
        path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, text)


def _claims_cell(case: TestCase) -> str:
    lines = []
    for claim in case.expected_answer.claims:
        prefix = "" if claim.importance == "required" else f"{claim.importance}: "
        lines.append(prefix + claim.text)
    return "\n".join(lines)


def write_review(path: Path, cases: Sequence[TestCase]) -> Path:
    """Write the review CSV and its drafts sidecar; returns the sidecar's path."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for case in cases:
        writer.writerow(
            {
                "keep": "yes",
                "id": case.id,
                "domain": case.domain,
                "intent": case.metadata.get("intent", case.metadata.get("style", "")),
                "query": case.query,
                "expected_answer": case.expected_answer.text,
                "claims": _claims_cell(case),
                "ground_truth": "\n".join(c.chunk_id for c in case.ground_truth),
                "response": case.response or "",
                "notes": "",
            }
        )
    sidecar = drafts_path(path)
    write_jsonl(sidecar, cases)
    _atomic(path, out.getvalue())
    return sidecar


_IMPORTANCES: dict[str, Importance] = {
    "required": "required",
    "expected": "expected",
    "optional": "optional",
}


def _parse_claims(cell: str, where: str) -> tuple[ExpectedClaim, ...]:
    claims: list[ExpectedClaim] = []
    for line in (ln.strip() for ln in cell.splitlines()):
        if not line:
            continue
        importance: Importance = "required"
        head, sep, rest = line.partition(":")
        given = _IMPORTANCES.get(head.strip().lower()) if sep else None
        if given is not None:
            importance, line = given, rest.strip()
        if not line:
            raise ReviewError(f"{where}: column 'claims': a claim line has no text")
        claims.append(ExpectedClaim(id=f"c{len(claims) + 1}", text=line, importance=importance))
    return tuple(claims)


def accept_review(path: Path) -> list[TestCase]:
    """The test set a reviewed CSV stands for. Raises ReviewError listing every problem."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ReviewError(f"{path}: cannot read the review file ({exc.strerror})") from exc
    drafts: dict[str, TestCase] = {}
    sidecar = drafts_path(path)
    if sidecar.exists():
        for number, line in enumerate(sidecar.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    case = TestCase.model_validate_json(line)
                except ValidationError as exc:
                    raise ReviewError(
                        f"{sidecar}:{number}: not a test case ({exc.errors()[0]['msg']})"
                    ) from exc
                drafts[case.id] = case
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("id", "query") if c not in (reader.fieldnames or [])]
    if missing:
        raise ReviewError(
            f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(COLUMNS)})"
        )
    problems: list[str] = []
    cases: list[TestCase] = []
    seen: set[str] = set()
    for number, row in enumerate(reader, start=2):
        where = f"{path}:{number}"
        if (row.get("keep") or "yes").strip().lower() in _NO:
            continue
        try:
            case = _case_of(row, drafts, where)
        except ReviewError as exc:
            problems.append(str(exc))
            continue
        if case.id in seen:
            problems.append(f"{where}: column 'id': {case.id!r} is used twice")
        seen.add(case.id)
        cases.append(case)
    if problems:
        raise ReviewError("\n".join(problems))
    if not cases:
        raise ReviewError(f"{path}: every row is marked not to keep; nothing to accept")
    return cases


def _case_of(row: dict[str, Any], drafts: dict[str, TestCase], where: str) -> TestCase:
    case_id = (row.get("id") or "").strip()
    query = (row.get("query") or "").strip()
    if not case_id:
        raise ReviewError(f"{where}: column 'id': empty")
    if not query:
        raise ReviewError(f"{where}: column 'query': empty (mark the row keep=no to drop it)")
    draft = drafts.get(case_id) or TestCase(id=case_id, query=query)
    chunks = {c.chunk_id: c for d in drafts.values() for c in d.ground_truth}
    ground_truth = draft.ground_truth
    if "ground_truth" in row and row["ground_truth"] is not None:
        ids = [i.strip() for i in row["ground_truth"].splitlines() if i.strip()]
        unknown = [i for i in ids if i not in chunks]
        if unknown:
            raise ReviewError(
                f"{where}: column 'ground_truth': unknown chunk id(s) {', '.join(unknown)}"
            )
        ground_truth = tuple(chunks[i] for i in ids)
    expected = draft.expected_answer
    if row.get("expected_answer") is not None or row.get("claims") is not None:
        expected = ExpectedAnswer(
            text=(row.get("expected_answer") or "").strip(),
            claims=_parse_claims(row.get("claims") or "", where),
        )
    update: dict[str, Any] = {
        "query": query,
        "expected_answer": expected,
        "ground_truth": ground_truth,
    }
    if row.get("domain") is not None:
        update["domain"] = row["domain"].strip()
    if row.get("response") is not None:
        update["response"] = row["response"].strip() or None
    intent = (row.get("intent") or "").strip()
    if intent:
        update["tags"] = tuple(
            dict.fromkeys((*[t for t in draft.tags if t != draft.metadata.get("intent")], intent))
        )
        update["metadata"] = {**draft.metadata, "intent": intent, "reviewed": True}
    else:
        update["metadata"] = {**draft.metadata, "reviewed": True}
    try:
        return TestCase.model_validate(
            {
                **draft.model_dump(),
                **update,
                "expected_answer": expected.model_dump(),
                "ground_truth": [c.model_dump() for c in ground_truth],
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ReviewError(f"{where}: column {field!r}: {first['msg']}") from exc


def summary(cases: Sequence[TestCase]) -> str:
    """One line: cases and how many have ground truth and claims."""
    gt = sum(1 for c in cases if c.ground_truth)
    claims = sum(1 for c in cases if c.expected_answer.claims)
    return f"{len(cases)} cases ({gt} with ground truth, {claims} with claims)"


__all__ = ["accept_review", "drafts_path", "summary", "write_jsonl", "write_review"]
