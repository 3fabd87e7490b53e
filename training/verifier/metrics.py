"""Figures shared by the verifier's training and its benchmark (numpy only, no torch)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def auroc(scores: npt.ArrayLike, positive: npt.ArrayLike) -> float:
    """Mann-Whitney AUROC of ``scores`` for the ``positive`` items, ties counted half; NaN
    when either class is empty."""
    s = np.asarray(scores, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if not n1 or not n0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    ordered = s[order]
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and ordered[j] == ordered[i]:
            j += 1
        ranks[order[i:j]] = (i + j + 1) / 2
        i = j
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))
