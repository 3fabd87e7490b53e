"""Attribution: does the response credit the source website (URL, domain or brand)?

Rules (the analyzer spec): a URL of the domain (any scheme, full or with a path, with or
without ``www.`` or another subdomain) scores ``url_weight``; the bare domain (any case,
word-bounded) ``domain_weight``; a brand name (word-bounded, any case) ``brand_weight``.
Score = min(cap, best weight + bonus x (mentions - 1)), 0 without mentions. Mentions never
overlap: a URL subsumes the domain and brands inside it, a domain subsumes brands inside it.

Null means not applicable: a case has *nothing to attribute* when it names no
brand and its domain is not a host name (``attributable``): a test set without a domain
gets its file name as the domain ("ragas_eval"), which no response could cite, so scoring
it 0 / poor would blame the answer for the test set. Such a case gets a null score and
tier, never 0. A real domain (``acme.com``, a host taken from a ground-truth URL) or any
brand name makes attribution applicable, and then a response without mentions scores 0.

The response is untrusted text: every pattern is built from ``re.escape``d inputs with
bounded repetition (no nested unbounded quantifiers), so matching stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.models import AttributionConfig, AttributionType, Tier, TierThresholds

CONTEXT_CHARS = 60
_TRAILING = ".,;:!?'\"*_"


@dataclass(frozen=True)
class Mention:
    """One attribution mention: ``response[start:end] == text``."""

    type: AttributionType
    text: str
    start: int
    end: int
    context: str
    """Up to 60 characters either side of the mention, with the mention."""


@dataclass(frozen=True)
class AttributionResult:
    """Attribution of a response (spec: score, tier, mentions, has_* flags)."""

    score: float | None
    """0-100, or None when the case has nothing to attribute (see ``attributable``)."""
    tier: Tier | None
    mentions: tuple[Mention, ...]

    def emptied(self, tier: Tier) -> AttributionResult:
        """The result for an empty response: 0 with ``tier``, or still null when n/a."""
        return AttributionResult(
            None if self.score is None else 0.0, None if self.score is None else tier, ()
        )

    @property
    def has_url_citation(self) -> bool:
        """A URL of the domain is cited."""
        return any(m.type == "url" for m in self.mentions)

    @property
    def has_domain_mention(self) -> bool:
        """The domain is named."""
        return any(m.type == "domain" for m in self.mentions)

    @property
    def has_brand_mention(self) -> bool:
        """A brand is named."""
        return any(m.type == "brand" for m in self.mentions)


def normalise_domain(domain: str) -> str:
    """``https://WWW.Acme.com/x`` -> ``acme.com``: lower case, no scheme, path, port, www."""
    host = domain.strip().lower()
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", host)
    host = re.split(r"[/?#]", host, maxsplit=1)[0]
    host = host.rsplit("@", 1)[-1].split(":", 1)[0].strip(".")
    return host.removeprefix("www.")


_HOST = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def attributable(domain: str, brand_names: Sequence[str]) -> bool:
    """True when a response could credit the case: a brand name, or a domain that is a
    host name (labels with dots, an alphabetic top-level label, as ``acme.co.uk``)."""
    if any(b.strip() for b in brand_names):
        return True
    return bool(_HOST.match(normalise_domain(domain)))


def _domain_pattern(domain: str) -> re.Pattern[str]:
    return re.compile(
        r"(?:(?P<scheme>(?<![\w+.-])[a-z][a-z0-9+.-]{0,20}://)|(?<![\w.-]))"
        r"(?P<host>(?:[a-z0-9-]{1,63}\.){0,4}" + re.escape(domain) + r")"
        r"(?!\.?[a-z0-9-])"
        r"(?P<port>:\d{1,5})?"
        r"(?P<path>[/?#][^\s<>\"'`()\[\]{}]{0,2000})?",
        re.IGNORECASE,
    )


def _brand_pattern(brand: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in brand.split()]
    return re.compile(r"(?<!\w)" + r"\s{1,5}".join(words) + r"(?!\w)", re.IGNORECASE)


def find_mentions(response: str, domain: str, brand_names: Sequence[str]) -> list[Mention]:
    """All non-overlapping mentions of the domain (as URL or domain) and the brands."""
    found: list[tuple[AttributionType, int, int]] = []
    host = normalise_domain(domain)
    if host:
        for match in _domain_pattern(host).finditer(response):
            start, end = match.start(), match.end()
            # Sentence punctuation after a URL is not part of it.
            while end > match.end("host") and response[end - 1] in _TRAILING:
                end -= 1
            is_url = bool(match.group("scheme")) or end > match.end("host")
            found.append(("url" if is_url else "domain", start, end))
    # Longer brands first, so "Acme Cloud" wins over "Acme" on the same text.
    brands = sorted({b.strip() for b in brand_names if b.strip()}, key=len, reverse=True)
    for brand in brands:
        for match in _brand_pattern(brand).finditer(response):
            start, end = match.start(), match.end()
            if all(end <= s or start >= e for _, s, e in found):
                found.append(("brand", start, end))
    found.sort(key=lambda m: m[1])
    return [
        Mention(
            kind,
            response[start:end],
            start,
            end,
            response[max(0, start - CONTEXT_CHARS) : end + CONTEXT_CHARS],
        )
        for kind, start, end in found
    ]


def score_attribution(
    response: str,
    domain: str,
    brand_names: Sequence[str],
    config: AttributionConfig,
    tiers: TierThresholds,
) -> AttributionResult:
    """Attribution score and mentions of ``response`` for ``domain`` and ``brand_names``;
    score and tier are None when there is nothing to attribute (``attributable``)."""
    if not attributable(domain, brand_names):
        return AttributionResult(None, None, ())
    mentions = find_mentions(response, domain, brand_names)
    weights = {"url": config.url_weight, "domain": config.domain_weight}
    if not mentions:
        score = 0.0
    else:
        best = max(weights.get(m.type, config.brand_weight) for m in mentions)
        score = min(config.max_score, best + config.multi_mention_bonus * (len(mentions) - 1))
    score = round(score, 2)
    return AttributionResult(score, tiers.tier(score), tuple(mentions))
