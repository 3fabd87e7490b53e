"""A deterministic demo: fictional company websites, questions, answers of varied quality.

Five companies, each with ground-truth pages and 20+ questions whose expected answers
carry 3-6 claims. Three AI providers answer every question each week; their habits
differ (complete or not, wrong facts, citing the URL, the domain, the brand or nothing)
and drift from week to week, so trend deltas move both ways. Everything comes from a
seeded ``random.Random``: the same seed gives byte-identical test sets.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from engine.models import ExpectedAnswer, ExpectedClaim, GroundTruthChunk, TestCase


@dataclass(frozen=True)
class Company:
    """A fictional company and the facts its website states."""

    name: str
    domain: str
    product: str
    facts: dict[str, str]


COMPANIES: tuple[Company, ...] = (
    Company(
        "Acme Cloud",
        "acmecloud.example",
        "Acme Vault",
        {
            "price": "$12 per user per month",
            "trial": "30-day free trial",
            "storage": "2 TB of storage per user",
            "support": "24/7 phone and chat support",
            "founded": "2014",
            "hq": "Denver",
            "uptime": "99.95% uptime SLA",
            "sso": "single sign-on with SAML and OIDC",
            "regions": "data centres in 6 regions",
            "encryption": "AES-256 encryption at rest",
        },
    ),
    Company(
        "Birchwood Bank",
        "birchwoodbank.example",
        "Birchwood Everyday Account",
        {
            "price": "no monthly fee",
            "trial": "a $150 bonus after 3 deposits",
            "storage": "up to 5 joint holders",
            "support": "branch support Monday to Saturday",
            "founded": "1921",
            "hq": "Portland",
            "uptime": "2.1% APY on savings",
            "sso": "fraud alerts by text message",
            "regions": "84 branches in 3 states",
            "encryption": "FDIC insurance up to $250,000",
        },
    ),
    Company(
        "Cobalt Bikes",
        "cobaltbikes.example",
        "Cobalt Trail 7",
        {
            "price": "$1,899",
            "trial": "a 60-day return window",
            "storage": "a 625 Wh battery",
            "support": "a lifetime frame warranty",
            "founded": "2009",
            "hq": "Boulder",
            "uptime": "a range of 110 km",
            "sso": "a 12-speed drivetrain",
            "regions": "dealers in 14 countries",
            "encryption": "a weight of 22 kg",
        },
    ),
    Company(
        "Dunmore Health",
        "dunmorehealth.example",
        "Dunmore Telecare",
        {
            "price": "$39 per visit",
            "trial": "a first visit free for new members",
            "storage": "prescriptions sent to 60,000 pharmacies",
            "support": "doctors available 7am to 11pm",
            "founded": "2017",
            "hq": "Chicago",
            "uptime": "an average wait of 9 minutes",
            "sso": "visits in English and Spanish",
            "regions": "service in all 50 states",
            "encryption": "HIPAA-compliant video visits",
        },
    ),
    Company(
        "Evergreen Travel",
        "evergreentravel.example",
        "Evergreen Rail Pass",
        {
            "price": "$289 for 15 days",
            "trial": "free cancellation up to 48 hours before departure",
            "storage": "one checked bag up to 23 kg",
            "support": "a 24-hour travel hotline",
            "founded": "1998",
            "hq": "Seattle",
            "uptime": "travel on 1,200 routes",
            "sso": "seat reservations included on night trains",
            "regions": "coverage of 33 countries",
            "encryption": "children under 4 travel free",
        },
    ),
)

# (fact key, page slug, question, claim sentence)
TOPICS: tuple[tuple[str, str, str, str], ...] = (
    ("price", "pricing", "How much does {product} cost?", "{product} costs {v}."),
    ("trial", "pricing", "Is there a trial or offer for {product}?", "{product} comes with {v}."),
    ("storage", "features", "What capacity does {product} offer?", "{product} offers {v}."),
    ("support", "support", "What support does {company} provide?", "{company} provides {v}."),
    ("founded", "about", "When was {company} founded?", "{company} was founded in {v}."),
    ("hq", "about", "Where is {company} based?", "{company} is headquartered in {v}."),
    (
        "uptime",
        "features",
        "What performance can I expect from {product}?",
        "{product} offers {v}.",
    ),
    ("sso", "features", "What is a key feature of {product}?", "{product} includes {v}."),
    ("regions", "about", "Where does {company} operate?", "{company} has {v}."),
    ("encryption", "security", "What protections come with {product}?", "{product} has {v}."),
)

PROVIDERS = ("gpt-x", "claude-y", "gemini-z")


def _swap_number(text: str, rng: random.Random) -> str:
    """Change the first number in ``text`` so the fact becomes wrong."""
    out = []
    changed = False
    for token in text.split(" "):
        digits = "".join(ch for ch in token if ch.isdigit())
        if digits and not changed:
            new = str(int(digits) + rng.choice([1, 2, 3, 5, 10]))
            token = token.replace(digits, new, 1) if digits in token else token
            changed = True
        out.append(token)
    if changed:
        return " ".join(out)
    return text.rstrip(".") + ", but only on the enterprise plan."


# Paraphrases, so answers are not verbatim copies of the expected claims.
_REWORDINGS: tuple[tuple[str, str], ...] = (
    (" costs ", " is priced at "),
    (" comes with ", " includes "),
    (" was founded in ", " started in "),
    (" is headquartered in ", " is based in "),
    (" provides ", " offers customers "),
    (" has ", " comes with "),
)


def _reword(sentence: str, rng: random.Random) -> str:
    for old, new in _REWORDINGS:
        if old in sentence and rng.random() < 0.5:
            return sentence.replace(old, new, 1)
    return sentence


_DODGES = (
    "I don't have reliable details about that. You may want to contact {company} directly.",
    "Policies like this change often; I'd recommend checking the official website.",
    "{company} is a well-known company with many products. It depends on your needs.",
)


def _page_url(company: Company, slug: str) -> str:
    return f"https://{company.domain}/{slug}"


def build_cases(seed: int = 7) -> list[TestCase]:
    """Questions with expected answers and ground truth (no responses yet)."""
    rng = random.Random(seed)
    cases: list[TestCase] = []
    for company in COMPANIES:
        fields = {"company": company.name, "product": company.product}
        pages: dict[str, list[str]] = {}
        for key, slug, _q, claim in TOPICS:
            sentence = claim.format(v=company.facts[key], **fields)
            pages.setdefault(slug, []).append(sentence)
        chunks = {
            slug: GroundTruthChunk(
                chunk_id=f"{slug}#0", page_url=_page_url(company, slug), text=" ".join(sentences)
            )
            for slug, sentences in pages.items()
        }
        keys = [t[0] for t in TOPICS]
        for n in range(22):
            main = TOPICS[n % len(TOPICS)]
            extra_count = rng.randint(2, 5)
            extras = rng.sample([k for k in keys if k != main[0]], extra_count)
            topic_keys = [main[0], *extras]
            claims = []
            for i, key in enumerate(topic_keys):
                topic = next(t for t in TOPICS if t[0] == key)
                claims.append(
                    ExpectedClaim(
                        id=f"c{i + 1}",
                        text=topic[3].format(v=company.facts[key], **fields),
                        importance="required" if i < 2 else rng.choice(["expected", "optional"]),
                    )
                )
            question = main[2].format(**fields)
            if n >= len(TOPICS):
                question = f"{question} Also tell me about {company.name} in general."
            slugs = sorted({next(t for t in TOPICS if t[0] == k)[1] for k in topic_keys})
            cases.append(
                TestCase(
                    id=f"{company.domain.split('.')[0]}-q{n + 1:02d}",
                    domain=company.domain,
                    query=question,
                    expected_answer=ExpectedAnswer(
                        text=" ".join(c.text for c in claims), claims=tuple(claims)
                    ),
                    ground_truth=tuple(chunks[s] for s in slugs),
                    brand_names=(company.name, company.product),
                    tags=(main[1], "long" if extra_count >= 4 else "short"),
                    metadata={"company": company.name},
                )
            )
    return cases


@dataclass(frozen=True)
class Habit:
    """How a provider answers in a given week."""

    keep_claims: float
    wrong_facts: float
    cite: str  # url | domain | brand | none
    vague: float = 0.05  # share of answers that dodge the question


def _habit(provider: str, week: int) -> Habit:
    # Quality drifts: gpt-x improves, claude-y regresses, gemini-z oscillates.
    if provider == "gpt-x":
        return Habit(
            0.55 + 0.12 * week,
            max(0.0, 0.25 - 0.07 * week),
            ["brand", "domain", "url", "url"][week % 4],
        )
    if provider == "claude-y":
        return Habit(
            0.95 - 0.1 * week, 0.05 + 0.06 * week, ["url", "url", "domain", "brand"][week % 4]
        )
    return Habit(
        0.7 + (0.15 if week % 2 else -0.1), 0.15, ["none", "brand", "none", "domain"][week % 4]
    )


def _respond(case: TestCase, provider: str, week: int, rng: random.Random) -> str:
    habit = _habit(provider, week)
    claims = list(case.expected_answer.claims)
    kept = [c for i, c in enumerate(claims) if i == 0 or rng.random() < habit.keep_claims]
    if rng.random() < 0.03:
        return ""  # an empty answer now and then, as real providers produce
    company = case.metadata.get("company", "")
    if rng.random() < habit.vague:
        return rng.choice(_DODGES).format(company=company)
    sentences = []
    for claim in kept:
        text = _reword(claim.text, rng)
        if rng.random() < habit.wrong_facts:
            text = _swap_number(text, rng)
        sentences.append(text)
    if rng.random() < 0.3:
        sentences.append("Prices and features may change, so check before you buy.")
    page = case.ground_truth[0].page_url if case.ground_truth else f"https://{case.domain}"
    cite = habit.cite
    if cite == "url":
        sentences.append(f"Source: {page}")
    elif cite == "domain":
        sentences.append(f"You can read more on {case.domain}.")
    elif cite == "brand":
        sentences.append(f"This is according to {company}.")
    opener = rng.choice(["", "Here is what I found. ", "Good question! "])
    return opener + " ".join(sentences)


RUN_NAMES = (
    "week 1 baseline",
    "week 2 prompt v2",
    "week 3 new retriever",
    "week 4 regression check",
)


def build_weekly_test_sets(
    folder: Path, *, seed: int = 7, weeks: int = 4, start: datetime | None = None
) -> list[tuple[str, Path, datetime]]:
    """Write one recorded test set per week; returns (run name, path, run date)."""
    folder.mkdir(parents=True, exist_ok=True)
    base = build_cases(seed)
    first = start or datetime(2026, 10, 26, 9, 0)
    out = []
    for week in range(weeks):
        rng = random.Random(seed * 1000 + week)
        path = folder / f"demo-week-{week + 1}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for case in base:
                for provider in PROVIDERS:
                    answered = case.model_copy(
                        update={
                            "id": f"{case.id}-{provider}",
                            "ai_provider": provider,
                            "response": _respond(case, provider, week, rng),
                        }
                    )
                    handle.write(json.dumps(answered.model_dump(mode="json")) + "\n")
        out.append((RUN_NAMES[week % len(RUN_NAMES)], path, first + timedelta(days=7 * week)))
    return out
