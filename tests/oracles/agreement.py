"""Agreement statistics written out by their textbook definitions, to check the SQL of
``judge_agreement`` against: Cohen's kappa, Pearson's r and Spearman's rho (average ranks
for ties). Plain Python, no scipy."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """(p_o - p_e) / (1 - p_e) over (rater A, rater B) label pairs; None when p_e = 1."""
    n = len(pairs)
    p_o = sum(a == b for a, b in pairs) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    p_e = sum(left[c] * right[c] for c in set(left) | set(right)) / (n * n)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None when either side has no variance."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def average_ranks(xs: Sequence[float]) -> list[float]:
    """1-based ranks; tied values share the mean of the ranks they span."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the average ranks."""
    return pearson(average_ranks(xs), average_ranks(ys))
