"""A test set from real query logs (the answer-synthesis document's test-set builder).

Steps: read the log (CSV, JSONL or a JSON array; columns found by their usual names),
drop exact duplicates (same query after case, spacing and punctuation are folded),
cluster near-identical queries (embedding cosine at or above ``CLUSTER_THRESHOLD``, or a
rapidfuzz token-sort ratio of 90+ for typos the embedder scores lower), label each cluster
with a domain (the log's, else its sources' host) and an intent (the log's, else
keyword rules), sample up to ``per_group`` clusters per (domain, intent) with a seeded
random, attach ground truth (pages whose URL a source names, else the closest chunk of
the same domain above ``GROUND_TRUTH_THRESHOLD``), and report coverage.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from rapidfuzz import fuzz

from engine.errors import InputError
from engine.files import json_loads
from engine.models import GroundTruthChunk, TestCase
from engine.testsets.build.pages import Chunk
from engine.testsets.reading import decode, read_bytes

CLUSTER_THRESHOLD = 0.9
"""Queries this close (cosine, local MiniLM) ask the same thing."""
FUZZ_THRESHOLD = 90.0
"""rapidfuzz token-sort ratio at which two queries are the same despite typos."""
GROUND_TRUTH_THRESHOLD = 0.5
"""Least cosine between a query and a chunk for the chunk to count as its ground truth."""

ALIASES: dict[str, tuple[str, ...]] = {
    "query": ("query", "question", "user_query", "prompt", "input", "search", "q"),
    "timestamp": ("timestamp", "ts", "time", "created_at", "date", "datetime"),
    "sources": ("sources", "source", "urls", "url", "citations", "references", "context_urls"),
    "answer": ("answer", "response", "output", "completion", "reply"),
    "domain": ("domain", "site", "host"),
    "intent": ("intent", "category", "topic"),
    "provider": ("ai_provider", "provider", "model", "engine"),
    "id": ("id", "query_log_id", "log_id", "queryLogId"),
}

_INTENT_WORDS: tuple[tuple[str, str], ...] = (
    ("pricing", r"price|pricing|cost|costs|fee|fees|plan|plans|cheap|\$\d+"),
    ("comparison", r"vs\.?|versus|compare|comparison|better than|difference"),
    ("troubleshooting", r"error|not working|broken|fix|fails?|issue|problem|can't|cannot"),
    ("policy", r"refund|cancel|return|privacy|terms|warranty|gdpr|policy"),
    ("how-to", r"how (do|can|to)|set ?up|install|configure|enable"),
    ("contact", r"contact|phone|email|address|support hours|opening hours|where is"),
)
INTENT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rf"(?<!\w)({words})(?!\w)", re.IGNORECASE)) for name, words in _INTENT_WORDS
)
"""First matching rule names a query's intent; none matching is ``informational``."""


class LogError(InputError):
    """A query log that cannot be read (missing file, no query column)."""


@dataclass(frozen=True)
class LogEntry:
    """One row of the log."""

    line: int
    query: str
    timestamp: str = ""
    sources: tuple[str, ...] = ()
    answer: str = ""
    domain: str = ""
    intent: str = ""
    provider: str = ""
    log_id: str = ""


@dataclass
class Cluster:
    """Queries that ask the same thing; the first (earliest) one represents them."""

    entries: list[LogEntry]
    domain: str = ""
    intent: str = ""
    ground_truth: list[Chunk] = field(default_factory=list)

    @property
    def head(self) -> LogEntry:
        """The representative: the earliest entry that has an answer, else the earliest."""
        answered = [e for e in self.entries if e.answer]
        return (answered or self.entries)[0]


def normalise(query: str) -> str:
    """Case, spacing and punctuation folded: the key of exact duplicates."""
    return " ".join(re.sub(r"[^\w\s]", " ", query.casefold()).split())


def _split_sources(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, list):
        return tuple(str(s).strip() for s in raw if str(s).strip())
    return tuple(s for s in re.split(r"[\s;|,]+", str(raw or "")) if s)


def _column(keys: Sequence[str], what: str) -> str | None:
    lowered = {k.lower().strip(): k for k in keys}
    for alias in ALIASES[what]:
        if alias.lower() in lowered:
            return lowered[alias.lower()]
    return None


def read_log(path: Path) -> tuple[list[LogEntry], list[str]]:
    """(entries, one line per skipped row) of a CSV, JSONL or JSON-array log.
    Raises LogError when the file cannot be read or has no query column."""
    try:
        text = decode(str(path), read_bytes(path, str(path)))
    except InputError:
        raise
    except OSError as exc:
        raise LogError(f"{path}: cannot read the log ({exc.strerror})") from exc
    rows: list[tuple[int, dict[str, Any]]] = []
    skipped: list[str] = []
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        stripped = text.lstrip()
        if stripped.startswith("["):
            try:
                rows = [(i + 1, r) for i, r in enumerate(json_loads(text, max_depth=None))]
            except json.JSONDecodeError as exc:
                raise LogError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
        else:
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    rows.append((number, json_loads(line, max_depth=None)))
                except json.JSONDecodeError as exc:
                    skipped.append(f"{path}:{number}: not JSON ({exc.msg})")
    else:
        reader = csv.DictReader(io.StringIO(text))
        rows = [(i + 2, r) for i, r in enumerate(reader)]  # line 1 is the header
    keys = sorted({k for _, r in rows if isinstance(r, dict) for k in r})
    columns = {what: _column(keys, what) for what in ALIASES}
    if columns["query"] is None:
        raise LogError(
            f"{path}: no query column (looked for {', '.join(ALIASES['query'])}; found "
            f"{', '.join(keys) or 'none'})"
        )
    entries = []
    for number, row in rows:
        if not isinstance(row, dict):
            skipped.append(f"{path}:{number}: not an object")
            continue

        def get(what: str, row: dict[str, Any] = row) -> Any:
            name = columns[what]
            return row.get(name) if name is not None else None

        query = str(get("query") or "").strip()
        if not query:
            skipped.append(f"{path}:{number}: empty query")
            continue
        entries.append(
            LogEntry(
                line=number,
                query=query,
                timestamp=str(get("timestamp") or ""),
                sources=_split_sources(get("sources")),
                answer=str(get("answer") or ""),
                domain=str(get("domain") or ""),
                intent=str(get("intent") or ""),
                provider=str(get("provider") or ""),
                log_id=str(get("id") or ""),
            )
        )
    entries.sort(key=lambda e: (e.timestamp, e.line))
    return entries, skipped


def intent_of(query: str) -> str:
    """The first intent rule the query matches, else ``informational``."""
    for name, pattern in INTENT_RULES:
        if pattern.search(query):
            return name
    return "informational"


def domain_of(entries: Sequence[LogEntry]) -> str:
    """The log's domain, else the most common host among the sources, else ``unknown``."""
    given = [e.domain for e in entries if e.domain]
    if given:
        return Counter(given).most_common(1)[0][0]
    hosts = [
        urlparse(s if "//" in s else f"//{s}").hostname or "" for e in entries for s in e.sources
    ]
    hosts = [h.removeprefix("www.") for h in hosts if h]
    return Counter(hosts).most_common(1)[0][0] if hosts else "unknown"


Embed = Callable[[Sequence[str]], Any]


def cluster(
    entries: Sequence[LogEntry], embed: Embed, threshold: float = CLUSTER_THRESHOLD
) -> tuple[list[Cluster], int]:
    """(clusters in order of first appearance, exact duplicates folded into them)."""
    exact: dict[str, list[LogEntry]] = {}
    for entry in entries:
        exact.setdefault(normalise(entry.query), []).append(entry)
    duplicates = sum(len(v) - 1 for v in exact.values())
    keys = list(exact)
    vectors = np.asarray(embed(keys), dtype=np.float32) if keys else np.zeros((0, 1))
    heads: list[int] = []
    member_of: list[int] = []
    for i, key in enumerate(keys):
        home = -1
        if heads:
            sims = vectors[heads] @ vectors[i]
            best = int(np.argmax(sims))
            if float(sims[best]) >= threshold:
                home = best
            else:
                ratios = [fuzz.token_sort_ratio(key, keys[h]) for h in heads]
                top = int(np.argmax(ratios))
                if ratios[top] >= FUZZ_THRESHOLD:
                    home = top
        if home < 0:
            heads.append(i)
            home = len(heads) - 1
        member_of.append(home)
    clusters = [Cluster(entries=[]) for _ in heads]
    for key, home in zip(keys, member_of, strict=True):
        clusters[home].entries.extend(exact[key])
    for c in clusters:
        c.entries.sort(key=lambda e: (e.timestamp, e.line))
        c.domain = domain_of(c.entries)
        given = [e.intent for e in c.entries if e.intent]
        c.intent = Counter(given).most_common(1)[0][0] if given else intent_of(c.head.query)
    return clusters, duplicates


def sample(clusters: Sequence[Cluster], per_group: int, seed: int) -> list[Cluster]:
    """Up to ``per_group`` clusters of every (domain, intent), drawn with ``seed``;
    groups in sorted order, clusters in log order within a group."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(clusters):
        groups.setdefault((c.domain, c.intent), []).append(i)
    rng = random.Random(seed)
    chosen: list[int] = []
    for key in sorted(groups):
        members = groups[key]
        picked = members if len(members) <= per_group else rng.sample(members, per_group)
        chosen.extend(sorted(picked))
    return [clusters[i] for i in chosen]


def attach_ground_truth(
    clusters: Sequence[Cluster],
    chunks: Sequence[Chunk],
    embed: Embed,
    *,
    top_k: int = 2,
    threshold: float = GROUND_TRUTH_THRESHOLD,
) -> None:
    """Give each cluster the chunks that answer it: chunks of pages its sources name (the
    closest ones), else the closest chunks of its domain at or above ``threshold``."""
    if not chunks or not clusters:
        return
    chunk_vectors = np.asarray(embed([c.text for c in chunks]), dtype=np.float32)
    query_vectors = np.asarray(embed([c.head.query for c in clusters]), dtype=np.float32)
    for c, q in zip(clusters, query_vectors, strict=True):
        sims = chunk_vectors @ q
        sources = {s.rstrip("/") for e in c.entries for s in e.sources}
        named = [i for i, ch in enumerate(chunks) if ch.page_url.rstrip("/") in sources]
        if named:
            ranked = sorted(named, key=lambda i: -sims[i])[:top_k]
        else:
            same = [i for i, ch in enumerate(chunks) if not ch.domain or ch.domain == c.domain]
            ranked = [
                i for i in sorted(same, key=lambda i: -sims[i])[:top_k] if sims[i] >= threshold
            ]
        c.ground_truth = [chunks[i] for i in ranked]


def to_case(c: Cluster, number: int) -> TestCase:
    """The native case of a sampled cluster (the log's answer kept as the response)."""
    head = c.head
    return TestCase(
        id=head.log_id or f"log-{number:04d}",
        domain=c.domain if c.domain != "unknown" else "",
        query=head.query,
        response=head.answer or None,
        ai_provider=head.provider,
        ground_truth=tuple(
            GroundTruthChunk(chunk_id=ch.chunk_id, page_url=ch.page_url, text=ch.text)
            for ch in c.ground_truth
        ),
        tags=(c.intent,),
        metadata={
            "intent": c.intent,
            "asked": len(c.entries),
            "variants": sorted({e.query for e in c.entries} - {head.query})[:10],
            "first_asked": c.entries[0].timestamp,
            "sources": sorted({s for e in c.entries for s in e.sources}),
            "log_lines": [e.line for e in c.entries][:50],
        },
    )


def coverage(all_clusters: Sequence[Cluster], chosen: Sequence[Cluster]) -> list[str]:
    """Lines of the coverage report: per (domain, intent) and overall."""
    total = sum(len(c.entries) for c in all_clusters)
    lines = [
        f"{'domain':<28} {'intent':<16} {'queries':>7} {'clusters':>8} {'sampled':>7} "
        f"{'with gt':>7}"
    ]
    keys = sorted({(c.domain, c.intent) for c in all_clusters})
    for key in keys:
        group = [c for c in all_clusters if (c.domain, c.intent) == key]
        picked = [c for c in chosen if (c.domain, c.intent) == key]
        lines.append(
            f"{key[0][:28]:<28} {key[1][:16]:<16} {sum(len(c.entries) for c in group):>7} "
            f"{len(group):>8} {len(picked):>7} {sum(1 for c in picked if c.ground_truth):>7}"
        )
    asked = sum(len(c.entries) for c in chosen)
    with_gt = sum(1 for c in chosen if c.ground_truth)
    lines.append(
        f"coverage: {len(chosen)} cases stand for {asked} of {total} logged queries "
        f"({asked / total:.0%}); {with_gt} of {len(chosen)} have ground truth"
        if total
        else "coverage: the log has no queries"
    )
    return lines
