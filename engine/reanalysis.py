"""Re-analysis: a run's stored answers scored again against new ground truth.

When the truth changes (a pricing page is updated), the answers a system gave need no new
target call: the cases the run kept (lake table ``cases``) and the responses it stored
(``results``) are joined with the new ground truth, read from any test-set file whose ids
match, into a recorded test set of the run's own answers. Scoring it is an ordinary run of
the same series whose config names the run it re-analyses (``reanalysis_of``) and the new
ground truth's file and hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from engine.errors import InputError
from engine.lake import read_table
from engine.models import RunConfig, TestCase
from engine.run.identity import latest_run_states, stored_config
from engine.settings import Paths
from engine.testsets import load_test_set

GENERATED_PREFIX = "reanalysis-"
"""Name prefix of the test sets a re-analysis writes for itself (the run's answers with
the new truth): working files, never offered as a test set to launch or as new truth."""


class ReanalysisError(InputError):
    """The run or the new ground truth cannot be re-analysed (one line, exit 2)."""


@dataclass(frozen=True)
class Reanalysis:
    """What re-analysing a run will score."""

    config: RunConfig
    """The new run's config: the old one's scoring settings, recorded answers."""
    test_set: Path
    """The recorded test set written for it (the run's answers, the new truth)."""
    cases: int
    missing: tuple[str, ...]
    """Cases of the run the new ground truth does not have (not scored)."""


def stored_cases(paths: Paths, run_id: str) -> dict[str, TestCase]:
    """The cases a run kept (lake table ``cases``), by id: re-analysis and drift re-score them."""
    table = read_table(paths.lake, "cases", run_id, 0, columns=("sample_id", "case_json"))
    return {
        str(row["sample_id"]): TestCase.model_validate_json(str(row["case_json"]))
        for row in table.to_pylist()
    }


def stored_answers(paths: Paths, run_id: str) -> dict[str, str]:
    """The first iteration's answer of each sample of the run's recorded or target lane."""
    table = read_table(
        paths.lake, "results", run_id, 1, columns=("sample_id", "candidate", "response")
    )
    return {
        str(row["sample_id"]): str(row["response"] or "")
        for row in table.to_pylist()
        if not row["candidate"]
    }


def plan_reanalysis(
    paths: Paths, run_id: str, ground_truth: Path, *, name: str | None, series: str | None
) -> Reanalysis:
    """The run that re-scores ``run_id``'s answers against ``ground_truth`` (a test set in
    any format whose ids are the run's case ids), in ``series`` (the old run's; default its
    ``--series`` or name). Writes its recorded test set under the home's ``test-sets/``.
    ``ReanalysisError`` when the run is unknown or kept no cases, or when the new ground
    truth shares no id with it."""
    state = latest_run_states(paths.lake).get(run_id)
    if state is None:
        raise ReanalysisError(f"run {run_id!r} is not in the lake of {paths.home}")
    old = stored_config(state)
    if old is None:
        raise ReanalysisError(f"run {run_id!r}: its stored config cannot be read")
    cases = stored_cases(paths, run_id)
    if not cases:
        raise ReanalysisError(
            f"run {run_id!r} kept no cases (it ran before runs kept them); run the test set "
            "again instead"
        )
    answers = stored_answers(paths, run_id)
    truth = {case.id: case for case in load_test_set(ground_truth).cases}
    shared = [sid for sid in cases if sid in truth and sid in answers]
    if not shared:
        raise ReanalysisError(
            f"{ground_truth}: none of its case ids is a case of run {run_id!r} "
            f"(the run's ids start {', '.join(sorted(cases)[:3])})"
        )
    rows = []
    for sid in shared:
        new = truth[sid]
        case = cases[sid].model_copy(
            update={
                "expected_answer": new.expected_answer,
                "ground_truth": new.ground_truth,
                "context": new.context if new.context is not None else cases[sid].context,
                "response": answers[sid],
            }
        )
        rows.append(json.dumps(case.model_dump(mode="json"), ensure_ascii=False))
    body = "\n".join(rows) + "\n"
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]
    target = paths.test_sets / f"{GENERATED_PREFIX}{run_id}-{digest}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    config = old.model_copy(
        update={
            "name": name or f"{old.name} (re-analysed)",
            "series": series or old.series or state.name,
            "test_set": str(target),
            "target": "recorded",
            "candidates": None,
            "reanalysis_of": run_id,
            "ground_truth_file": str(ground_truth),
            "ground_truth_hash": hashlib.sha256(ground_truth.read_bytes()).hexdigest(),
        }
    )
    missing = tuple(sorted(set(cases) - set(shared)))
    return Reanalysis(RunConfig.model_validate(config.model_dump()), target, len(shared), missing)
