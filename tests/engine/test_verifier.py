"""The claim verifier's machinery (engine/verifier): the pair encoding the training and the
runtime share, the evidence window, the loading rules, and the shipped model's outputs not
depending on what they are computed with. Its decisions on fixed pairs:
test_verifier_decisions.py; its held-out quality: ``python -m tests.bench.verifier_quality``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.verifier import CrossEncoderVerifier, select_evidence
from engine.verifier.decide import rank, rank_many
from engine.verifier.evidence import PassageTerms, relevance, split_passages
from engine.verifier.model import (
    MAX_CLAIM_TOKENS,
    MAX_TOKENS,
    encode_pair,
    forget_pairs,
    load_tokenizer,
)


def test_importing_the_package_loads_no_torch_and_no_onnxruntime() -> None:
    code = (
        "import sys, engine.verifier as v; "
        "assert 'torch' not in sys.modules and 'onnxruntime' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


def test_missing_model_raises_a_clear_error(tmp_path: Path) -> None:
    from engine.verifier import VerifierError

    v = CrossEncoderVerifier(model_path=tmp_path / "absent.onnx")
    with pytest.raises(VerifierError):
        v.predict([("a", "b")])


def test_pair_encoding_is_the_bert_pair_template_and_keeps_the_claim() -> None:
    tok = load_tokenizer()
    ids, types = encode_pair(tok, "the cat sat", "a cat is sitting")
    tokens = [tok.id_to_token(i) for i in ids]
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2 and tokens[-1] == "[SEP]"
    first_sep = tokens.index("[SEP]")
    assert set(types[: first_sep + 1]) == {0} and set(types[first_sep + 1 :]) == {1}
    long_ids, _long_types = encode_pair(tok, "word " * 1000, "the claim survives")
    assert len(long_ids) == MAX_TOKENS
    assert [tok.id_to_token(i) for i in long_ids[-4:-1]] == ["the", "claim", "survives"]
    huge_claim, _ = encode_pair(tok, "evidence", "claim " * 500)
    assert len(huge_claim) <= MAX_TOKENS and huge_claim.count(tok.token_to_id("[SEP]")) == 2
    assert sum(1 for t in _ if t == 1) == MAX_CLAIM_TOKENS + 1


def test_a_pairs_probabilities_do_not_depend_on_the_pairs_read_with_it() -> None:
    """Dynamic int8 quantization scales a whole input at once: read in a batch, a pair's
    probabilities would change with its neighbours, and a sample's score with its batch."""
    pair = ("The Zephyr X2 is sold in Canada and Peru.", "The Zephyr X2 is sold in Peru.")
    others = [
        ("Acme Cloud provides 24/7 phone and chat support. " * 6, "Support is by email."),
        ("The warranty lasts two years.", "It has no warranty."),
    ]
    forget_pairs()  # each read below is the model's, not this process's memory of it
    alone = CrossEncoderVerifier().predict([pair])[0]
    forget_pairs()
    together = CrossEncoderVerifier().predict([*others, pair])[2]
    assert alone.tolist() == together.tolist()


# --------------------------------------------------------------------------- evidence window


def test_short_evidence_is_kept_whole_and_in_order() -> None:
    passages = ["First line.", "Second line.", "Third line."]
    assert select_evidence("anything", passages) == "First line. Second line. Third line."


def test_long_evidence_keeps_the_relevant_passages_in_document_order() -> None:
    filler = [f"Filler sentence number {i} talks about weather and gardens." for i in range(60)]
    doc = [*filler[:20], "The ferry to Orkney leaves Aberdeen at 5 pm daily.", *filler[20:]]
    doc.insert(50, "Tickets for the Orkney ferry cost 40 pounds.")
    window = select_evidence("When does the Orkney ferry leave Aberdeen?", doc, k=2)
    assert window == (
        "The ferry to Orkney leaves Aberdeen at 5 pm daily. Tickets for the Orkney ferry cost 40 "
        "pounds."
    )
    assert len(select_evidence("weather", doc, k=4, word_budget=30).split()) <= 30


def test_relevance_weights_rare_words() -> None:
    scores = relevance("Orkney ferry times", ["the ferry", "Orkney ferry", "times"])
    assert scores[1] == max(scores)


def test_passages_tokenised_once_rank_every_claim_as_alone() -> None:
    passages = [
        "The Zephyr X2 ships in Canada.",
        "Its warranty lasts two years in Canada and Peru.",
        "Orkney ferry times change in winter.",
        "",
    ]
    claims = ["Zephyr warranty in Peru", "ferry times", "the", "", "winter Canada ferry"]
    terms = PassageTerms(passages)
    assert [terms.relevance(c) for c in claims] == [relevance(c, passages) for c in claims]
    cosines = [None, [0.1, 0.9, 0.0, 0.2], None, [0.0] * 4, [0.3, 0.3, 0.3, 0.3]]
    assert rank_many(claims, passages, cosines) == [
        rank(c, passages, row) for c, row in zip(claims, cosines, strict=True)
    ]
    assert rank_many([], passages, []) == []


def test_split_passages_on_sentences_and_lines() -> None:
    text = "Hello there. This is two.\nAgent: a third line! And 4 more?"
    assert split_passages(text) == [
        "Hello there.",
        "This is two.",
        "Agent: a third line!",
        "And 4 more?",
    ]


def test_a_second_verifier_on_the_same_cache_reads_nothing_and_answers_the_same(
    tmp_path: Path,
) -> None:
    pairs = [
        ("The Zephyr X2 is sold in Canada and Peru.", "The Zephyr X2 is sold in Peru."),
        ("The warranty lasts two years.", "It has no warranty."),
    ]
    first = CrossEncoderVerifier(cache_dir=tmp_path).logits(pairs)
    again = CrossEncoderVerifier(cache_dir=tmp_path)
    assert again.predict(pairs).tolist() == CrossEncoderVerifier().predict(pairs).tolist()
    assert again.logits(pairs).tolist() == first.tolist()
    assert again._session is None  # every pair came from the cache: no model was loaded
    assert (tmp_path / "verifier.sqlite3").exists()
    new = [("The office opens at nine.", "The office opens at ten.")]
    assert again.logits(new).tolist() == CrossEncoderVerifier().logits(new).tolist()
    assert again._session is not None


def test_a_pair_read_by_one_verifier_is_not_read_again_by_another_and_reaches_its_cache(
    tmp_path: Path,
) -> None:
    pairs = [("The office opens at nine on weekdays.", "The office opens at nine.")]
    forget_pairs()
    first = CrossEncoderVerifier().logits(pairs)
    other = CrossEncoderVerifier(cache_dir=tmp_path)
    assert other.logits(pairs).tolist() == first.tolist()
    assert other._session is None  # this process had read the pair: no model loaded for it
    # The home's disk cache holds it all the same, for its next run in another process.
    forget_pairs()
    later = CrossEncoderVerifier(cache_dir=tmp_path)
    assert later.logits(pairs).tolist() == first.tolist() and later._session is None
