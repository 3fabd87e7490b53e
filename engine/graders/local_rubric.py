"""Rubrics the deterministic local judge can grade: criteria it can check by rule.

A language model reads any rubric; the local judge reads none, but many rubrics are lists
of checkable criteria. A rubric is split into criteria (one per line, bullet or sentence;
``Pass if:`` / ``Fail if:`` headers set which way the following lines count), and each
criterion must be one of these forms, or the rubric is refused while graders are bound,
naming the criterion it cannot check:

* ``mentions X`` (also includes / contains / names / refers to / must mention X): the
  output contains X, case-insensitively; quoted phrases are each required;
* ``does not mention X`` (also never mentions / avoids / must not mention X);
* ``under N words`` (fewer than / less than / at most / no more than / shorter than N
  words, or sentences); ``at least N words`` (more than / over / longer than);
* ``cites a source`` (cites its sources / includes a citation, a source, a link or a
  URL): a URL, a ``[Source: ...]`` or ``[1]`` marker, or "according to";
* ``is valid JSON``.

A criterion that joins checks with "and" or ";" ("mentions the price and cites a source")
is one criterion per check, when each check stands alone (is one of the forms above);
a mention whose unquoted phrase holds such a join and cannot be split ("mentions the price
and explains the discount") is refused, since it would look for that whole sentence.

Score = criteria met / criteria; the reason names every criterion, met and not met.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from engine.graders.base import GraderConfigError
from engine.graders.deterministic import strip_code_fence


class LocalJudgeRefusal(GraderConfigError):
    """A rubric grader was bound to the deterministic local judge, which cannot check one
    of its criteria."""


Check = Callable[[str], bool]

_SUBJECT = re.compile(
    r"^(?:(?:the\s+)?(?:response|output|answer|reply)\s+|it\s+)?"
    r"(?:(?:must|should|shall|has to|needs to|is required to)\s+)?",
    re.IGNORECASE,
)
_MENTION = re.compile(
    r"^(?:mentions?|includes?|contains?|names?|refers?\s+to|states?|says?)\s+(?P<x>.+)$",
    re.IGNORECASE,
)
_NOT_MENTION = re.compile(
    r"^(?:(?:does\s+not|doesn't|do\s+not|must\s+not|should\s+not|never)\s+"
    r"(?:mention|include|contain|name|refer\s+to|say|state)s?|avoids?(?:\s+mentioning)?)"
    r"\s+(?P<x>.+)$",
    re.IGNORECASE,
)
_AT_MOST = re.compile(
    r"^(?:is\s+|be\s+)?(?:under|fewer\s+than|less\s+than|at\s+most|no\s+more\s+than|"
    r"shorter\s+than|not\s+longer\s+than|within)\s+(?P<n>\d+)\s+(?P<unit>words?|sentences?)"
    r"(?:\s+long)?$",
    re.IGNORECASE,
)
_AT_LEAST = re.compile(
    r"^(?:is\s+|be\s+)?(?:at\s+least|more\s+than|over|longer\s+than)\s+(?P<n>\d+)\s+"
    r"(?P<unit>words?|sentences?)(?:\s+long)?$",
    re.IGNORECASE,
)
_CITES = re.compile(
    r"^(?:cites?|includes?|provides?|gives?|has|links?\s+to)\s+(?:a|an|its|at\s+least\s+one|"
    r"one\s+or\s+more)?\s*(?:sources?|citations?|references?|links?|urls?)$",
    re.IGNORECASE,
)
_JSON = re.compile(r"^(?:is\s+|be\s+)?(?:valid\s+json|a\s+valid\s+json\s+object|json)$", re.I)
_CITATION = re.compile(
    r"https?://\S+|\[(?:source|sources|ref|citation)[^\]]*\]|\[\d+\]|\baccording to\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"'“‘]([^\"'”’]+)[\"'”’]")
_HEADER = re.compile(r"^(?P<head>pass|fail)(?:\s+if|\s+when)?\s*:?\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


@dataclass(frozen=True)
class Criterion:
    """One checkable criterion of a rubric."""

    text: str
    """The criterion as the rubric wrote it."""
    check: Check
    """True when the output meets it."""


def _words(text: str) -> int:
    return len(text.split())


def _sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])


def _is_json(text: str) -> bool:
    try:
        json.loads(strip_code_fence(text))
    except ValueError:
        return False
    return True


def _phrases(raw: str) -> list[str]:
    quoted = _QUOTED.findall(raw)
    if quoted:
        return [q.strip().lower() for q in quoted if q.strip()]
    return [raw.strip().strip(".").strip().lower()]


def _mentions(phrases: list[str]) -> Check:
    return lambda out: all(p in out.lower() for p in phrases)


def _count(unit: str, n: int, at_most: bool) -> Check:
    measure = _words if unit.lower().startswith("word") else _sentences
    return (lambda out: measure(out) <= n) if at_most else (lambda out: measure(out) >= n)


def _negated(check: Check) -> Check:
    return lambda out: not check(out)


def read_criterion(text: str) -> Check | None:
    """The check of one criterion, or None when no rule can check it."""
    body = _SUBJECT.sub("", text.strip().rstrip(".;")).strip()
    if m := _NOT_MENTION.match(body):
        phrases = _phrases(m.group("x"))
        return lambda out: not any(p in out.lower() for p in phrases)
    if m := _AT_MOST.match(body):
        n = int(m.group("n"))
        # "under 50 words" allows 49; "at most 50 words" allows 50.
        strict = not re.match(r"(?:is\s+|be\s+)?(?:at\s+most|no\s+more|within)", body, re.I)
        return _count(m.group("unit"), n - 1 if strict else n, at_most=True)
    if m := _AT_LEAST.match(body):
        n = int(m.group("n"))
        strict = bool(re.match(r"(?:is\s+|be\s+)?(?:more\s+than|over|longer)", body, re.I))
        return _count(m.group("unit"), n + 1 if strict else n, at_most=False)
    if _CITES.match(body):
        return lambda out: _CITATION.search(out) is not None
    if _JSON.match(body):
        return _is_json
    if m := _MENTION.match(body):
        return _mentions(_phrases(m.group("x")))
    return None


def _mentioned(text: str) -> str | None:
    """The phrase a mention criterion (``mentions X``, ``does not mention X``) looks for,
    as written; None for any other form."""
    body = _SUBJECT.sub("", text.strip().rstrip(".;")).strip()
    if m := _NOT_MENTION.match(body):
        return m.group("x")
    if any(r.match(body) for r in (_AT_MOST, _AT_LEAST, _CITES, _JSON)):
        return None
    m = _MENTION.match(body)
    return m.group("x") if m else None


_JOIN = re.compile(r",?\s+and\s+|\s*;\s*", re.IGNORECASE)
"""Where a criterion may join two checks: "and" (", and") or ";"."""


def _joins(text: str) -> list[re.Match[str]]:
    """The joins of ``text`` outside quoted phrases."""
    quoted = [m.span() for m in _QUOTED.finditer(text)]
    return [m for m in _JOIN.finditer(text) if not any(a <= m.start() < b for a, b in quoted)]


def compound_parts(criterion: str) -> tuple[str, ...]:
    """The checks ``criterion`` joins with "and" or ";", each a criterion of its own:
    ``mentions the price and cites a source`` is ``mentions the price`` and ``cites a
    source``. A part starts a new check only when it stands alone (``read_criterion`` can
    check it); otherwise it stays with the part before it, so ``mentions salt and pepper``
    stays one criterion."""
    start = 0
    pieces: list[tuple[str, str]] = []
    for join in _joins(criterion):
        pieces.append((criterion[start : join.start()], join.group(0)))
        start = join.end()
    if not pieces:
        return (criterion.strip(),)
    pieces.append((criterion[start:], ""))
    parts = [pieces[0][0]]
    separator = pieces[0][1]
    for piece, after in pieces[1:]:
        if read_criterion(piece) is not None:
            parts.append(piece)
        else:
            parts[-1] += separator + piece
        separator = after
    return tuple(p.strip() for p in parts if p.strip(" .;"))


def statement_parts(rubric: str) -> tuple[str, ...]:
    """The checks of a rubric that is one statement (one line, one sentence, no ``Pass
    if:`` header), split as ``compound_parts`` splits them; a longer rubric whole, for a
    language model to read as written."""
    lines = _lines(rubric)
    if len(lines) != 1 or _HEADER.match(lines[0]):
        return (rubric.strip(),)
    return compound_parts(lines[0])


def _lines(rubric: str) -> list[str]:
    out: list[str] = []
    for line in rubric.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        if _HEADER.match(line):
            out.append(line)
            continue
        # one criterion per sentence or ';'-separated part of a line
        out += [p.strip() for p in re.split(r"(?<=[.;])\s+", line) if p.strip(" .;")]
    return out


def compile_rubric(rubric: str, where: str) -> tuple[Criterion, ...]:
    """The rubric's criteria, each checkable; a criterion joining checks that stand alone
    is one criterion per check (under ``Fail if:`` one, failing when all of them hold).
    Raises LocalJudgeRefusal naming the first criterion no rule can check, or a mention
    joining words it cannot split (``where`` names the grader and its type)."""
    criteria: list[Criterion] = []
    failing = False
    for line in _lines(rubric):
        header = _HEADER.match(line)
        if header:
            failing = header.group("head").lower() == "fail"
            continue
        parts = compound_parts(line)
        checks = [_check(part, where) for part in parts]
        if failing:
            # "Fail if: A and B" fails an output that does both, not one that does either.
            criteria.append(Criterion(f"not: {line}", _negated(_all(checks))))
        else:
            criteria += [Criterion(p, c) for p, c in zip(parts, checks, strict=True)]
    if not criteria:
        raise LocalJudgeRefusal(f"{where}: the rubric holds no criterion the local judge can check")
    return tuple(criteria)


def _all(checks: list[Check]) -> Check:
    return checks[0] if len(checks) == 1 else lambda out: all(c(out) for c in checks)


def _check(criterion: str, where: str) -> Check:
    """The check of one criterion. Raises LocalJudgeRefusal when no rule reads it."""
    phrase = _mentioned(criterion)
    if phrase is not None and not _QUOTED.search(phrase) and _joins(phrase):
        raise LocalJudgeRefusal(
            f"{where}: the criterion '{criterion}' joins two things with 'and' or ';', and "
            f"the local judge would look for the words '{phrase.strip()}' as written. "
            "Put each check on its own line or join checks it knows ('mentions the "
            "price and cites a source'), or quote a phrase that is one "
            "('mentions \"salt and pepper\"')."
        )
    check = read_criterion(criterion)
    if check is None:
        raise LocalJudgeRefusal(
            f"{where}: its rubric must be read by a language model, and the local judge "
            f"is deterministic: it cannot check the criterion '{criterion}' (it checks "
            "'mentions X', 'does not mention X', 'under N words', 'at least N words', "
            "'cites a source' and 'is valid JSON'). Run with --judge openai:MODEL, "
            "anthropic:MODEL or ollama:MODEL, reword the criterion, or leave this grader out."
        )
    return check


def grade_locally(criteria: tuple[Criterion, ...], output: str) -> tuple[float, str]:
    """(share of criteria met, reason naming each criterion met and not met)."""
    met = [c.text for c in criteria if c.check(output)]
    unmet = [c.text for c in criteria if not c.check(output)]
    score = len(met) / len(criteria)
    # Every criterion is named, met or not: a rubric split into checks shows each one.
    reason = f"local judge: {len(met)} of {len(criteria)} criteria met"
    if met:
        reason += ": " + "; ".join(repr(m) for m in met)
    if unmet:
        reason += "; not met: " + "; ".join(repr(u) for u in unmet)
    return score, reason
