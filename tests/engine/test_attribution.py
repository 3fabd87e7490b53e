"""Attribution: URL 100, domain 75, brand 50, +10 per extra mention, cap 100, no overlaps."""

from __future__ import annotations

import pytest

from engine.models import AttributionConfig, TierThresholds
from engine.scoring.attribution import normalise_domain, score_attribution


def score(text: str, domain: str = "acme.com", brands: tuple[str, ...] = ("Acme", "Acme Cloud"),
          **weights: float):  # type: ignore[no-untyped-def]  # fmt: skip
    return score_attribution(text, domain, brands, AttributionConfig(**weights), TierThresholds())


@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        ("Nothing relevant here.", 0.0, []),
        ("Try Acme.", 50.0, ["brand"]),
        ("Acme is fine, acme is cheap.", 60.0, ["brand", "brand"]),
        ("Go to ACME.com today.", 75.0, ["domain"]),
        ("Go to www.acme.com or ask Acme.", 85.0, ["domain", "brand"]),
        ("See https://acme.com.", 100.0, ["url"]),
        ("See acme.com/pricing, acme.com and Acme Cloud.", 100.0, ["url", "domain", "brand"]),
        ("Acmes and notacme.com are not it.", 0.0, []),
        ("acme.company is another site", 50.0, ["brand"]),
        ("Mail info@acme.com or visit docs.acme.com/guide.", 100.0, ["domain", "url"]),
        ("ftp://www.Acme.COM/files", 100.0, ["url"]),
    ],
)
def test_rules(text: str, expected: float, kinds: list[str]) -> None:
    result = score(text)
    assert result.score == expected
    assert [m.type for m in result.mentions] == kinds
    for m in result.mentions:
        assert text[m.start : m.end] == m.text


def test_url_subsumes_domain_and_brand() -> None:
    text = "Read https://www.acme.com/acme-cloud/acme for details."
    result = score(text)
    assert [(m.type, m.text) for m in result.mentions] == [
        ("url", "https://www.acme.com/acme-cloud/acme")
    ]
    assert result.score == 100.0 and result.has_url_citation
    assert not result.has_brand_mention and not result.has_domain_mention


def test_domain_subsumes_brand_and_longer_brand_wins() -> None:
    result = score("acme.com sells Acme Cloud.")
    assert [(m.type, m.text) for m in result.mentions] == [
        ("domain", "acme.com"),
        ("brand", "Acme Cloud"),
    ]
    assert result.score == 85.0 and result.tier == "excellent"


def test_trailing_punctuation_and_context() -> None:
    text = "x" * 100 + " see acme.com/pricing. " + "y" * 100
    (mention,) = score(text).mentions
    assert mention.text == "acme.com/pricing"
    assert mention.context == text[mention.start - 60 : mention.end + 60]


def test_weights_and_cap_are_configurable() -> None:
    result = score("Acme, Acme, Acme, Acme.", brand_weight=40, multi_mention_bonus=5, max_score=50)
    assert result.score == 50.0
    assert score("Acme, Acme, Acme.", brand_weight=40, multi_mention_bonus=5).score == 50.0


def test_domain_normalisation_and_empty_inputs() -> None:
    assert normalise_domain("https://WWW.Acme.com:443/about") == "acme.com"
    assert score("acme.com", domain="https://www.ACME.com/").score == 75.0
    # Nothing to attribute is null (n/a), not 0: a score of 0 would read as a failure.
    empty = score("acme.com", domain="", brands=())
    assert empty.score is None and empty.tier is None and empty.mentions == ()


def test_nothing_to_attribute_is_null_and_a_real_domain_or_brand_is_scored() -> None:
    # A file-stem domain (no dot, or a non-alphabetic top label) cannot be cited.
    for stem in ("ragas_eval", "my-tests", "data.v2"):
        assert score("ragas_eval is great", domain=stem, brands=()).score is None
    assert score("nothing here", domain="acme.co.uk", brands=()).score == 0.0
    assert score("nothing here", domain="acme.co.uk", brands=()).tier == "poor"
    assert score("Ask Acme", domain="ragas_eval", brands=("Acme",)).score == 50.0


def test_hostile_text_is_linear() -> None:
    import time

    text = "a." * 20000 + "acme" + "-" * 5000
    start = time.perf_counter()
    score(text)
    assert time.perf_counter() - start < 2.0
