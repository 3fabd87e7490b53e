"""Bradley–Terry ratings of the systems compared head to head (``compare-runs``).

The ``ratings`` view rates players with Elo, which depends on the order the games were
played in. Bradley–Terry does not: it finds one strength ``p`` per player such that
``P(i beats j) = p_i / (p_i + p_j)`` fits all the games at once (maximum likelihood, by
Hunter's 2004 MM iteration). A tie counts as half a win for each side, as it does in Elo.

A player who won (or lost) every game has no finite maximum-likelihood strength, so by
default every player also plays ``prior`` virtual tied games against a reference player of
strength 1 (a small pull towards the middle that matters only for lopsided records);
``prior=0`` is the plain estimate. Strengths are shown on the Elo scale,
``1000 + 400 log10(p_i / geometric mean of p)``, so the two columns read alike: 400 points
apart means 10-to-1 odds.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

CENTRE = 1000.0
"""The rating of a player of average (geometric mean) strength."""
SCALE = 400.0
"""Rating points per factor of 10 in the odds (as in Elo)."""


def bradley_terry(
    games: Iterable[tuple[str, str, float]],
    *,
    prior: float = 1.0,
    max_iterations: int = 10_000,
    tolerance: float = 1e-10,
) -> dict[str, float]:
    """Ratings on the Elo scale from ``(player_a, player_b, score_a)`` games (``score_a``
    1 win, 0.5 tie, 0 loss for ``player_a``); ``prior`` virtual ties per player against a
    reference of strength 1. Empty input gives no ratings."""
    if prior < 0:
        raise ValueError(f"prior {prior:g}: must be 0 or more")
    wins: dict[str, float] = defaultdict(float)
    meetings: dict[tuple[str, str], float] = defaultdict(float)
    for a, b, score in games:
        if a == b:
            continue  # a player cannot gain or lose strength against itself
        wins[a] += score
        wins[b] += 1.0 - score
        meetings[(min(a, b), max(a, b))] += 1.0
    players = sorted(wins)
    if not players:
        return {}
    opponents: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (a, b), n in meetings.items():
        opponents[a].append((b, n))
        opponents[b].append((a, n))
    strength = dict.fromkeys(players, 1.0)
    for _ in range(max_iterations):
        new = {}
        for i in players:
            # MM update: p_i = W_i / sum_j n_ij / (p_i + p_j), the reference included.
            won = wins[i] + prior / 2
            denominator = sum(n / (strength[i] + strength[j]) for j, n in opponents[i])
            denominator += prior / (strength[i] + 1.0)
            new[i] = won / denominator if denominator > 0 else strength[i]
        if prior == 0:  # without the reference only ratios are fixed: pin the geometric mean
            mean = math.exp(sum(math.log(max(p, 1e-300)) for p in new.values()) / len(new))
            new = {i: p / mean for i, p in new.items()}
        change = max(abs(math.log(max(new[i], 1e-300) / strength[i])) for i in players)
        strength = new
        if change < tolerance:
            break
    logs = {i: math.log10(max(p, 1e-300)) for i, p in strength.items()}
    centre = sum(logs.values()) / len(logs)
    return {i: CENTRE + SCALE * (v - centre) for i, v in logs.items()}
