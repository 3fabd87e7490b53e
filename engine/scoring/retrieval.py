"""Retrieval metrics of one case: how high the retrieval ranked the ground-truth passages.

A RAG answer can be wrong because the retriever never found the right passage; these
metrics tell that apart from a generator that ignored it. Relevance is binary: a retrieved
passage is relevant when it *is* a ground-truth passage, decided in this order:

1. **ids**: the case's ``retrieved_context_ids`` against its ``relevant_context_ids``, else
   against the ``ground_truth`` chunk ids, else (when the retrieved ids are URLs) against
   the ground-truth page URLs (then a page is the unit: any passage of it counts).
2. **text**, when the case has no ids: retrieved passages (``context``) against the
   ground-truth texts, first by equality once case and spaces are normalised, then by the
   run's embedder at the run's ``retrieval_match_threshold`` (cosine).

Each relevant passage counts once, at the first rank that retrieved it, and each retrieved
passage stands for at most one relevant passage: a duplicate in the ranking is not relevant
the second time, and near-duplicate ground truth cannot be found twice by one passage. So
precision and recall stay within 0..1 and NDCG never exceeds 1.

With ``R`` relevant passages, ``r`` the ranks (from 1) where they were found:
Hit@k = 1 if some r <= k; MRR = 1 / min(r) (0 when none, over the whole ranking);
precision@k = |{r <= k}| / k (k, not the list length: a retriever that returned fewer
passages is not rewarded for it); recall@k = |{r <= k}| / R;
NDCG@k = sum_{r <= k} 1/log2(r + 1) / sum_{i=1..min(R, k)} 1/log2(i + 1).
A case with no relevant passage has no retrieval metrics (None), not zeros.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import numpy.typing as npt

from engine.models import TestCase

MatchKind = Literal["id", "url", "text"]
"""What decided relevance for a case: ids, page URLs, or passage texts."""

DERIVED_TRUTH_PREFIX = "ctx#"
"""Chunk ids of ground truth copied from the case's own context (a case without any
reference): such truth says nothing about retrieval."""

NAMED_TRUTH_PREFIXES = ("ctx#", "ref#")
"""Chunk ids a loader made up (``ref#i`` for reference passages without ids): they name no
passage a retriever could return, so they are matched by text."""

RANK_METRIC_PREFIX = "rank:"
"""``sample_scores.metric`` of the rows that say at which rank one relevant passage came
(``rank:<passage id>``); the other rows of the retrieval scorer are metrics."""


@dataclass(frozen=True)
class RetrievalTask:
    """What one case asks of its retrieval: a ranking and the passages it should hold."""

    by: MatchKind
    """How relevance is decided."""
    retrieved: tuple[str, ...]
    """The ranking, best first: normalised ids or URLs, or passage texts."""
    relevant: tuple[str, ...]
    """The relevant passages (no duplicates), in the same terms as ``retrieved``."""
    relevant_names: tuple[str, ...]
    """How each relevant passage is named to people (its id, URL, or ``ref#i``)."""
    retrieved_names: tuple[str, ...]
    """How each retrieved passage is named to people (its id, or ``#rank``)."""


@dataclass(frozen=True)
class Found:
    """Where one relevant passage was retrieved."""

    rank: int | None
    """Rank (from 1) of the first retrieved passage that is it; None when none is."""
    how: str
    """``id``, ``url``, ``text`` (equal texts) or ``embedding``."""
    similarity: float | None = None
    """Cosine of the match, when the embedder decided it."""


PASSAGE_ID_KEYS = ("id", "doc_id", "document_id", "chunk_id", "url", "page_url", "source")
"""Keys of a context object that name the passage, most specific first: the retrieval
metrics match them against the case's ground-truth ids or page URLs."""


def passage_id(item: Any) -> str | None:
    """The id a retrieved passage object names (``PASSAGE_ID_KEYS``), None for text or an
    object without one."""
    if isinstance(item, dict):
        for key in PASSAGE_ID_KEYS:
            value = item.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
                return str(value).strip()
        metadata = item.get("metadata")
        if isinstance(metadata, dict):
            return passage_id({k: v for k, v in metadata.items() if k != "metadata"})
    return None


def normalised_id(value: str) -> str:
    """An id as compared: trimmed; a URL also with a lower-case scheme and host and without
    its fragment, query-less trailing slash or default port."""
    text = value.strip()
    if not re.match(r"^https?://", text, re.IGNORECASE):
        return text
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    path = parts.path.rstrip("/") if not parts.query else parts.path
    return urlunsplit((parts.scheme.lower(), host, path, parts.query, ""))


def normalised_text(value: str) -> str:
    """A passage as compared for equality: case-folded, runs of spaces as one."""
    return " ".join(value.casefold().split())


def _is_url(value: str) -> bool:
    return bool(re.match(r"^https?://", value.strip(), re.IGNORECASE))


def _unique(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def retrieval_task(case: TestCase) -> RetrievalTask | None:
    """The ranking and relevant passages of ``case``; None when it has no retrieval to
    score (no ranking, or no ground truth that is not a copy of its own context)."""
    truth = [c for c in case.ground_truth if not c.chunk_id.startswith(DERIVED_TRUTH_PREFIX)]
    ids = case.retrieved_context_ids
    if ids is not None:
        keys = tuple(normalised_id(i) for i in ids)
        given = [normalised_id(i) for i in case.relevant_context_ids]
        chunk_ids = [
            c.chunk_id.strip() for c in truth if not c.chunk_id.startswith(NAMED_TRUTH_PREFIXES)
        ]
        urls = [normalised_id(c.page_url) for c in truth if c.page_url]
        relevant: tuple[str, ...] = ()
        by: MatchKind = "id"
        if given:
            relevant = _unique(given)
        elif chunk_ids and set(keys) & set(chunk_ids):
            relevant = _unique(chunk_ids)
        elif urls and any(_is_url(i) for i in ids):
            relevant, by = _unique(urls), "url"
        elif chunk_ids:
            relevant = _unique(chunk_ids)
        if relevant:
            return RetrievalTask(by, keys, relevant, relevant, tuple(i.strip() for i in ids))
    if case.context is None or not truth:
        return None
    names = tuple(case.retrieved_context_ids or (f"#{i}" for i in range(1, len(case.context) + 1)))
    texts: dict[str, str] = {}
    for chunk in truth:
        texts.setdefault(chunk.text, chunk.chunk_id)
    return RetrievalTask("text", case.context, tuple(texts), tuple(texts.values()), names)


def match_keys(task: RetrievalTask) -> list[Found]:
    """Where each relevant id or URL of ``task`` was first retrieved."""
    first: dict[str, int] = {}
    for rank, key in enumerate(task.retrieved, start=1):
        first.setdefault(key, rank)
    return [Found(first.get(key), task.by) for key in task.relevant]


Similarity = Callable[[Sequence[str], Sequence[str]], npt.NDArray[np.float32]]
"""Cosine of every (retrieved, relevant) pair of texts: a matrix, retrieved by row."""


def match_texts(
    task: RetrievalTask, similarity: Similarity | None, threshold: float
) -> list[Found]:
    """Where each relevant passage of ``task`` was first retrieved, by text. Equal texts
    match first; the embedder (``similarity``) is asked only when some relevant passage is
    still missing, and then each retrieved passage, in rank order, takes the most similar
    missing passage at or above ``threshold`` (ties: the first in the ground truth)."""
    found: dict[int, Found] = {}
    used: set[int] = set()
    wanted = {normalised_text(t): j for j, t in reversed(list(enumerate(task.relevant)))}
    for rank, passage in enumerate(task.retrieved, start=1):
        j = wanted.get(normalised_text(passage))
        if j is not None and j not in found:
            found[j] = Found(rank, "text", 1.0)
            used.add(rank)
    missing = [j for j in range(len(task.relevant)) if j not in found]
    if missing and similarity is not None and len(used) < len(task.retrieved):
        scores = similarity(task.retrieved, [task.relevant[j] for j in missing])
        for row in range(len(task.retrieved)):
            if row + 1 in used:
                continue
            best_col, best = -1, threshold
            for col, j in enumerate(missing):
                value = float(scores[row, col])
                # ">=" admits the threshold itself; ">" keeps the first of equal scores.
                if j not in found and (value > best or (best_col < 0 and value >= best)):
                    best_col, best = col, value
            if best_col >= 0:
                found[missing[best_col]] = Found(row + 1, "embedding", round(best, 4))
    return [found.get(j, Found(None, "text")) for j in range(len(task.relevant))]


def retrieval_metrics(ranks: Sequence[int | None], ks: Sequence[int]) -> dict[str, float]:
    """Hit@k, MRR, NDCG@k, precision@k and recall@k from the rank of each relevant passage
    (None: not retrieved); ranks are distinct. Empty when there is no relevant passage."""
    total = len(ranks)
    if total == 0:
        return {}
    hits = sorted(r for r in ranks if r is not None)
    out = {"mrr": 1.0 / hits[0] if hits else 0.0}
    for k in ks:
        top = [r for r in hits if r <= k]
        ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(total, k) + 1))
        out[f"hit@{k}"] = 1.0 if top else 0.0
        out[f"precision@{k}"] = len(top) / k
        out[f"recall@{k}"] = len(top) / total
        out[f"ndcg@{k}"] = sum(1.0 / math.log2(r + 1) for r in top) / ideal
    return out
