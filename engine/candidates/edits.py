"""Rule-based edits of a system prompt: what ``evalhouse candidates vary`` tries.

A prompt is read as instruction units: each bullet (``-``, ``*``, ``+``, ``1.``) and each
sentence of a prose line; headings (``#``), lead-ins ending in ``:`` and blank lines stay
where they are. The edits
are the ones a prompt engineer tries first, each described by a small JSON-able mapping
(the ``edit`` a variant records, so its id and its meaning are the same thing):

* ``{"kind": "ablate", "index": i, "removed": text}`` drops one unit (does it matter?);
* ``{"kind": "reorder", "order": [...]}`` puts the units in another order (position bias);
* ``{"kind": "tone" | "format", "added": sentence}`` appends one constraint.

Everything here is pure and deterministic: ``plan_edits`` draws with ``random.Random(seed)``.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Edit = dict[str, Any]
"""One edit: ``kind`` and what the kind needs (see the module docstring)."""

CONSTRAINTS: tuple[tuple[str, str, str], ...] = (
    ("tone", "concise", "Answer concisely."),
    ("tone", "friendly", "Answer in a friendly tone."),
    ("format", "three-sentences", "Answer in at most three sentences."),
    ("format", "bullets", "Use bullet points."),
    ("format", "cite-url", "Cite the source URL."),
)
"""(kind, label, sentence) of every tone and format constraint, in the order tried."""

_ENUMERATED_UNITS = 6
"""Up to this many units every order is listed (720); beyond, orders are drawn at random
(7! = 5,040 orders already dwarf any count a person asks for)."""

_BULLET_RE = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+)(\S.*)$")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[{])")


@dataclass(frozen=True)
class _Line:
    prefix: str
    """Bullet marker with its spaces, or the indentation of a prose line."""
    units: tuple[str, ...]
    """Instruction units of the line; empty for a fixed line (blank or heading)."""
    fixed: str | None = None
    """The line as it is, when it holds no unit."""


def _lines(body: str) -> list[_Line]:
    out: list[_Line] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.endswith(":"):
            out.append(_Line("", (), fixed=line))
            continue
        bullet = _BULLET_RE.match(line)
        if bullet:
            out.append(_Line(bullet.group(1), (bullet.group(2).rstrip(),)))
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out.append(_Line(indent, tuple(_SENTENCE_RE.split(stripped))))
    return out


def instruction_units(body: str) -> list[str]:
    """The instruction units of ``body`` in reading order."""
    return [unit for line in _lines(body) for unit in line.units]


def _render(lines: list[_Line], texts: list[str | None]) -> str:
    """The body with unit ``i`` replaced by ``texts[i]`` (None: dropped); a line left
    without units is dropped, and runs of blank lines are collapsed to one."""
    rendered: list[str] = []
    position = 0
    for line in lines:
        if line.fixed is not None:
            rendered.append(line.fixed)
            continue
        kept = [t for t in texts[position : position + len(line.units)] if t is not None]
        position += len(line.units)
        if kept:
            rendered.append(line.prefix + " ".join(kept))
    text = "\n".join(rendered)
    return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text).strip()


def apply_edit(body: str, edit: Edit) -> str:
    """``body`` with ``edit`` applied. Raises ValueError for an edit that does not fit."""
    kind = edit.get("kind")
    lines = _lines(body)
    units: list[str | None] = [u for line in lines for u in line.units]
    if kind == "ablate":
        index = int(edit["index"])
        if not 0 <= index < len(units) or units[index] != edit.get("removed"):
            raise ValueError(f"the prompt has no unit {index} reading {edit.get('removed')!r}")
        units[index] = None
        return _render(lines, units)
    if kind == "reorder":
        order = [int(i) for i in edit["order"]]
        if sorted(order) != list(range(len(units))):
            raise ValueError(f"order {order} is not a permutation of {len(units)} units")
        return _render(lines, [units[i] for i in order])
    if kind in ("tone", "format"):
        return f"{body.strip()}\n\n{edit['added']}".strip()
    raise ValueError(f"unknown edit kind {kind!r}")


def edit_label(edit: Edit) -> str:
    """A short human label of ``edit`` (the variant's ``variant_label``)."""
    kind = str(edit["kind"])
    if kind == "ablate":
        return f"ablate-{int(edit['index']) + 1}"
    if kind == "reorder":
        return "reorder-" + ".".join(str(int(i) + 1) for i in edit["order"])
    for c_kind, label, sentence in CONSTRAINTS:
        if c_kind == kind and sentence == edit.get("added"):
            return f"{kind}-{label}"
    return kind


def single_edits(body: str) -> list[Edit]:
    """Every ablation and every constraint the prompt does not already state."""
    units = instruction_units(body)
    edits: list[Edit] = []
    if len(units) >= 2:  # dropping the only instruction leaves no prompt to compare
        edits += [{"kind": "ablate", "index": i, "removed": u} for i, u in enumerate(units)]
    lowered = body.lower()
    edits += [
        {"kind": kind, "added": sentence}
        for kind, _, sentence in CONSTRAINTS
        if sentence.lower() not in lowered
    ]
    return edits


def available_edits(body: str) -> int:
    """How many distinct edits ``plan_edits`` can draw for ``body``."""
    n = len(instruction_units(body))
    orders = math.factorial(n) - 1 if n >= 2 else 0
    return len(single_edits(body)) + orders


def _orders(n: int, rng: random.Random) -> Iterator[tuple[int, ...]]:
    """Orders of ``n`` units other than the identity, in a seeded random order."""
    identity = tuple(range(n))
    if n <= _ENUMERATED_UNITS:
        every = [p for p in itertools.permutations(range(n)) if p != identity]
        rng.shuffle(every)
        yield from every
        return
    while True:
        yield tuple(rng.sample(range(n), n))


def plan_edits(body: str, count: int, seed: int) -> list[Edit]:
    """``count`` distinct edits of ``body``, the same for the same seed.

    One reorder joins the single edits and the lot is shuffled, so a small count already
    mixes kinds; beyond that, further orders are drawn. Raises ValueError when ``body``
    allows fewer than ``count`` edits.
    """
    available = available_edits(body)
    if count > available:
        raise ValueError(f"the prompt allows {available} distinct variants, not {count}")
    rng = random.Random(seed)
    n = len(instruction_units(body))
    orders = _orders(n, rng) if n >= 2 else iter(())
    pool = single_edits(body)
    seen: set[tuple[int, ...]] = set()
    first = next(orders, None)
    if first is not None:
        seen.add(first)
        pool.append({"kind": "reorder", "order": list(first)})
    rng.shuffle(pool)
    out = pool[:count]
    identity = tuple(range(n))
    while len(out) < count:
        order = next(orders)
        if order in seen or order == identity:
            continue
        seen.add(order)
        out.append({"kind": "reorder", "order": list(order)})
    return out
