"""Claims derived from a reference answer: atoms, filler dropped, ids stable across runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from engine.scoring.derived_claims import claim_id, derive_claims


def texts(reference: str) -> list[str]:
    return [c.text for c in derive_claims(reference)]


def test_coordinated_predicates_share_the_subject() -> None:
    assert texts("The Pro plan costs $20 per month and includes 100 GB of storage.") == [
        "The Pro plan costs $20 per month",
        "The Pro plan includes 100 GB of storage",
    ]


def test_lists_become_one_claim_per_item() -> None:
    assert texts("The Team plan includes SSO, audit logs and priority support.") == [
        "The Team plan includes SSO",
        "The Team plan includes audit logs",
        "The Team plan includes priority support",
    ]


def test_clauses_and_sentences_split_and_filler_drops() -> None:
    reference = (
        "Great question! Additionally, annual billing saves 15%; refunds are available "
        "within 30 days. Paris is the capital of France, while Berlin is the capital of "
        "Germany. Is that clear? Hope this helps!"
    )
    assert texts(reference) == [
        "Annual billing saves 15%",
        "Refunds are available within 30 days",
        "Paris is the capital of France",
        "Berlin is the capital of Germany",
    ]


def test_noun_phrase_coordination_and_colon_lists_stay_whole() -> None:
    assert texts("Salt and pepper are used in most recipes.") == [
        "Salt and pepper are used in most recipes"
    ]
    assert texts("Acme Cloud offers three plans: Free, Pro and Team.") == [
        "Acme Cloud offers three plans: Free, Pro and Team"
    ]


def test_fragments_and_duplicates_are_dropped() -> None:
    assert texts("Expected.") == []
    assert texts("Refunds take 5 days. Refunds take 5 days.") == ["Refunds take 5 days"]
    assert texts("") == [] and texts("   ") == []


def test_ids_are_a_hash_of_the_normalised_text() -> None:
    expected = "d" + hashlib.sha256(b"the pro plan costs $20 per month").hexdigest()[:8]
    assert claim_id("The Pro plan costs $20 per month.") == expected
    assert claim_id("  the PRO plan costs   $20 per month ") == expected
    claims = derive_claims("The Pro plan costs $20 per month and includes 100 GB of storage.")
    assert claims[0].id == expected
    assert all(c.importance == "expected" for c in claims)
    # Editing one sentence leaves the other claim's id alone.
    edited = derive_claims("The Pro plan costs $20 per month and includes 200 GB of storage.")
    assert edited[0].id == claims[0].id and edited[1].id != claims[1].id


def test_ids_are_identical_in_a_fresh_process() -> None:
    reference = "Northwind was founded in 1998 by Maria Lopez and is based in Leeds."
    here = [(c.id, c.text) for c in derive_claims(reference)]
    code = (
        "import json,sys; from engine.scoring.derived_claims import derive_claims; "
        "print(json.dumps([(c.id, c.text) for c in derive_claims(sys.argv[1])]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, reference],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    assert [tuple(x) for x in json.loads(out.stdout)] == here
    assert [t for _, t in here] == [
        "Northwind was founded in 1998 by Maria Lopez",
        "Northwind is based in Leeds",
    ]
