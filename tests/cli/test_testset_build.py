"""`evalhouse testset from-pages | from-logs | accept`, end to end and offline."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from engine.settings import Paths
from engine.testsets import load_test_set
from evalhouse.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
PAGES = DATA / "pages" / "site"
LOG = DATA / "logs" / "queries.csv"


def _cases(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_from_pages_writes_a_test_set_run_accepts(home: Paths, tmp_path: Path) -> None:
    out = tmp_path / "generated.jsonl"
    args = ["testset", "from-pages", str(PAGES), "--home", str(home.home), "--count", "10",
            "--domain", "harbornotes.example", "--seed", "3", "--output", str(out)]  # fmt: skip
    assert main(args) == 0
    cases = _cases(out)
    assert len(cases) == 10
    styles = {c["metadata"]["style"] for c in cases}  # type: ignore[index]
    assert styles == {"simple", "reasoning", "multi-context", "adversarial", "out-of-scope"}
    for case in cases:
        chunks = {g["chunk_id"]: g for g in case["ground_truth"]}  # type: ignore[union-attr]
        assert chunks, case
        # every claim tied to a chunk that states it, word for word
        for claim_id, chunk_id in case["metadata"]["claim_chunks"].items():  # type: ignore[index]
            claim = next(c for c in case["expected_answer"]["claims"] if c["id"] == claim_id)  # type: ignore[index]
            assert claim["text"].rstrip(".") in chunks[chunk_id]["text"]
    urls = {g["page_url"] for c in cases for g in c["ground_truth"]}  # type: ignore[union-attr]
    assert "https://harbornotes.example/support" in urls  # the HTML page's canonical link
    assert not any("tracking" in json.dumps(c) for c in cases)  # scripts are not text
    loaded = load_test_set(out, strict=True)
    assert loaded.format == "native-jsonl" and len(loaded.cases) == 10
    # same seed, same bytes
    again = tmp_path / "again.jsonl"
    assert main([*args[:-1], str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_from_pages_adversarial_premise_is_wrong_and_out_of_scope_is_not_on_the_pages(
    home: Paths, tmp_path: Path
) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["testset", "from-pages", str(PAGES), "--home", str(home.home), "--count", "6",
                 "--styles", "adversarial,out-of-scope", "--output", str(out)]) == 0  # fmt: skip
    text = " ".join(p.read_text() for p in PAGES.iterdir()).lower()
    for case in _cases(out):
        meta = case["metadata"]
        if meta["style"] == "adversarial":  # type: ignore[index]
            assert meta["false_premise"].lower() not in text  # type: ignore[index]
        else:
            topic = str(case["query"]).split(" offer ")[1].rstrip("?")
            assert topic.lower() not in text


def test_from_pages_bad_input_is_one_line_exit_2(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    assert main(["testset", "from-pages", str(tmp_path / "nope"), "--home", str(home.home),
                 "--output", str(out)]) == 2  # fmt: skip
    assert "no such file or folder" in capsys.readouterr().err and not out.exists()
    assert main(["testset", "from-pages", str(PAGES), "--home", str(home.home),
                 "--styles", "simple,tricky", "--output", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "tricky" in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_from_logs_folds_duplicates_and_near_duplicates(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "logs.jsonl"
    assert main(["testset", "from-logs", str(LOG), "--home", str(home.home), "--pages",
                 str(PAGES), "--output", str(out)]) == 0  # fmt: skip
    err = capsys.readouterr().err
    cases = _cases(out)
    # 7 queries: the 4 Team-plan questions (two exact duplicates after folding case and
    # punctuation, one typo) are one case; founded, SSO, refund are three more.
    assert len(cases) == 4
    team = next(c for c in cases if "Team plan" in str(c["query"]))
    assert team["metadata"]["asked"] == 4  # type: ignore[index]
    assert team["query"] == "How much does the Team plan cost?"  # the earliest asking
    assert team["tags"] == ["pricing"] and team["domain"] == "harbornotes.example"
    assert team["ground_truth"][0]["page_url"] == "https://harbornotes.example/pricing"  # type: ignore[index]
    assert "1 rows skipped" in err and ":9: empty query" in err
    assert "exact duplicates: 2" in err
    assert "stand for 7 of 7 logged queries (100%)" in err
    assert load_test_set(out, strict=True).format == "native-jsonl"


def test_from_logs_samples_per_group_with_a_seed(home: Paths, tmp_path: Path) -> None:
    rows = ["timestamp,query,domain"]
    things = [
        "kayaks",
        "tents",
        "lanterns",
        "sleeping bags",
        "hiking boots",
        "water filters",
        "camp stoves",
        "rain jackets",
        "trekking poles",
        "hammocks",
        "compasses",
        "maps",
    ]
    rows += [f"2026-01-{i + 1:02d},What is the price of your {t}?,shop.example"
             for i, t in enumerate(things)]  # fmt: skip
    log = tmp_path / "log.csv"
    log.write_text("\n".join(rows) + "\n")
    picks = []
    for seed in (1, 1, 2):
        out = tmp_path / f"s{seed}.jsonl"
        assert main(["testset", "from-logs", str(log), "--home", str(home.home), "--per-group",
                     "3", "--seed", str(seed), "--cluster-threshold", "0.99",
                     "--output", str(out)]) == 0  # fmt: skip
        picks.append([c["query"] for c in _cases(out)])
    assert len(picks[0]) == 3 and picks[0] == picks[1] and picks[2] != picks[0]


def test_review_then_accept(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    review = tmp_path / "review.csv"
    assert main(["testset", "from-logs", str(LOG), "--home", str(home.home), "--pages",
                 str(PAGES), "--review", str(review)]) == 0  # fmt: skip
    assert "testset accept" in capsys.readouterr().err
    rows = list(csv.DictReader(review.open()))
    rows[0]["expected_answer"] = "The Team plan costs $14 per user per month."
    rows[0]["claims"] = "The Team plan costs $14 per user per month.\noptional: Billing is monthly."
    rows[1]["keep"] = "no"
    with review.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "accepted.jsonl"
    assert main(["testset", "accept", str(review), "--output", str(out)]) == 0
    cases = _cases(out)
    assert len(cases) == len(rows) - 1
    claims = cases[0]["expected_answer"]["claims"]  # type: ignore[index]
    assert [c["importance"] for c in claims] == ["required", "optional"]
    assert cases[0]["ground_truth"]  # chunk texts come back from the drafts file
    assert load_test_set(out, strict=True).cases[0].metadata["reviewed"] is True
    # a bad edit: one line naming file, line and column; nothing written
    rows[2]["ground_truth"] = "pricing#99"
    with review.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    bad = tmp_path / "bad.jsonl"
    assert main(["testset", "accept", str(review), "--output", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{review}:4: column 'ground_truth': unknown chunk id(s) pricing#99" in err
    assert not bad.exists()
