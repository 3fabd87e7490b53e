"""Questions as a person would type them, from a page's fact sentences: the offline writer.

A fact is read as subject, verb and the rest of its first clause ("The Team plan" /
"costs" / "$14 per user per month"). The key span of the clause (an amount, a year, a
duration, a count, a percentage) becomes the question word and the verb moves the way
English moves it: "How much does the Team plan cost per user per month?", "When was Harbor
Notes founded?", "How many employees does the company now have across Lisbon and
Toronto?". A fact without such a span is asked about plainly ("What does the Team plan
include?", "Can I cancel at any time?"). Nothing names the page a fact came from: a user
asks about the product, not about a page title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.testsets.build.facts import _SPANS, _VERB, _lower_first

_BE = frozenset({"is", "are", "was", "were"})
_MODAL = frozenset({"can", "will", "must"})
_PAST_BE = frozenset({"was", "were"})
_ASK_WHAT = frozenset(
    {"include", "offer", "provide", "support", "cover", "give", "allow", "require", "have"}
)
"""Verbs whose object a person asks for with "What does X <verb>?"."""
_LASTING = frozenset({"take", "last", "run"})
"""Verbs a duration answers ("How long do refunds take?")."""
_PREPOSITIONS = frozenset(
    {"in", "on", "at", "for", "since", "by", "from", "of", "to", "after", "up", "with"}
)
_ADVERBS = frozenset({"now", "also", "still", "currently", "already", "only", "always"})
_NOT_COUNTED = frozenset(
    {"and", "or", "per", "in", "on", "at", "for", "of", "to", "by", "kg", "g", "lb", "lbs",
     "km", "m", "cm", "mm", "mi", "miles", "wh", "kwh", "tb", "gb", "mb", "mph", "w", "v", "mah"}
)  # fmt: skip
"""Words after a number that make it a measure, not a count of things."""
_PRONOUNS = {"you": "I", "You": "I", "your": "my", "Your": "My"}


_CLAUSE_END = re.compile(r";|:|,(?!\d)| and (?=[a-z]+s\b|" + _VERB.pattern + ")")
"""Where a fact's first clause ends (a comma inside a number, as in $250,000, does not)."""


@dataclass(frozen=True)
class Clause:
    """A fact's first clause: its subject, verb and what follows the verb."""

    subject: str
    verb: str
    rest: str


def _first_clause(rest: str) -> str:
    """``rest`` up to the first comma, semicolon, colon, or "and" that starts another verb."""
    return _CLAUSE_END.split(rest, maxsplit=1)[0].strip()


def _main_verb(body: str) -> re.Match[str] | None:
    """The first verb that is not a noun of the subject: in "Harbor Notes support is
    available" the verb is "is", "support" being the verb's subject."""
    for match in _VERB.finditer(body):
        following = _VERB.match(body, match.end() + 1)
        if following is None or body[match.end() : match.end() + 1] != " ":
            return match
    # A verb the list does not know ("stores", "sends"): the first lower-case word ending
    # in -s after a short subject.
    return re.search(r"(?<=[A-Za-z] )[a-z]+s\b", body)


def parse(sentence: str) -> Clause | None:
    """The sentence's first clause; None when its subject is not 1-6 words before a verb."""
    body = sentence.strip().rstrip(" .!;:")
    match = _main_verb(body)
    if match is None:
        return None
    subject = body[: match.start()].strip(" ,")
    if not 1 <= len(subject.split()) <= 6 or subject.endswith(("and", "or")):
        return None
    return Clause(subject, match.group(0).lower(), _first_clause(body[match.end() :]))


def lemma(verb: str) -> str:
    """The plain form after "does": costs -> cost, has -> have, carries -> carry."""
    if verb in ("has", "have"):
        return "have"
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("sses", "xes", "ches", "shes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def _aux(clause: Clause) -> str:
    return "does" if lemma(clause.verb) != clause.verb else "do"


def _subject(clause: Clause, *, asker: bool = True) -> str:
    """The subject inside a question: "you" becomes the asker, a leading article and a
    plural common noun ("Invoices are sent...") lose their sentence capital."""
    words = clause.subject.split()
    if asker and words[0] in _PRONOUNS:
        words[0] = _PRONOUNS[words[0]]
    first = words[0]
    next_is_name = len(words) > 1 and words[1][:1].isupper()
    if first[:1].isupper() and first[1:].islower() and first.endswith("s") and not next_is_name:
        words[0] = first.lower()
    return _lower_first(" ".join(words))


def _sentence_case(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text[0].upper() + text[1:] + "?"


def _span(rest: str) -> tuple[str, str, str, str] | None:
    """(question words, text before the span, the span, text after it) of a clause."""
    for words, pattern in _SPANS[:-1]:  # a name alone is no question a person asks
        match = pattern.search(rest)
        if match is None:
            continue
        before, span, after = rest[: match.start()], match.group(0).strip(), rest[match.end() :]
        if before.endswith("/"):
            continue  # 24/7 is no count
        if words == "how many":
            unit = re.match(r"\s*(\w+)", after)
            if unit is None or unit.group(1).lower() in _NOT_COUNTED:
                continue  # "12 kg", "3 per": a measure or a rate is no count
        return words, before.strip(), span, after.strip()
    return None


def _drop_preposition(text: str) -> str:
    words = text.split()
    while words and words[-1].lower() in _PREPOSITIONS:
        words.pop()
    return " ".join(words)


def join_questions(first: str, second: str) -> str:
    """Two questions asked in one breath: "How much does X cost, and when was Y founded?"."""
    lowered = second if second.startswith("I ") else second[:1].lower() + second[1:]
    return f"{first.rstrip('?')}, and {lowered}"


def question_for(sentence: str) -> tuple[str, str] | None:
    """(question, answer span) a person would ask for this fact; the span is '' for a
    question the whole fact answers; None when the sentence does not parse."""
    clause = parse(sentence)
    if clause is None:
        return None
    who, verb, be = _subject(clause), clause.verb, clause.verb in _BE
    found = _span(clause.rest)
    if found is not None:
        words, before, span, after = found
        head = f"{verb} {who}" if be else f"{_aux(clause)} {who} {lemma(verb)}"
        if words == "how much" and not before:
            return _sentence_case(f"how much {head} {after}"), span
        thing = _drop_preposition(re.sub(r"\s+(a|an|the)$", "", before))
        if words == "how much" and thing and thing.split()[0].lower() not in _PREPOSITIONS:
            # "has FDIC insurance up to $250,000" -> "How much FDIC insurance does X have?"
            return _sentence_case(f"how much {thing} {head}"), span
        if words == "which year":
            return _sentence_case(f"when {head} {_drop_preposition(before)}"), span
        if words == "how long" and (be or lemma(verb) in _LASTING):
            return _sentence_case(f"how long {head} {_drop_preposition(before)}"), span
        if words == "how many":
            noun, _, tail = after.partition(" ")
            if before.lower().endswith(" in") or before.lower() == "in":
                # "has dealers in 14 countries" -> "In how many countries ... have dealers?"
                where = before[: -len("in")].strip()
                return _sentence_case(f"in how many {noun} {head} {where} {tail}"), span
            if not before:  # the count is the verb's object: "has 120 branches"
                return _sentence_case(f"how many {noun} {head} {tail}"), span
        if words == "what percentage" and after and not be:
            return _sentence_case(f"what {after} {head} {before}"), span
    if verb in _MODAL:
        return _sentence_case(f"{verb} {who} {clause.rest}"), ""
    if not be and lemma(verb) in _ASK_WHAT:
        return _sentence_case(f"what {_aux(clause)} {who} {lemma(verb)}"), ""
    first = clause.rest.split(" ", 1)[0].lower()
    if not be and first in _PREPOSITIONS | {"with"}:  # "comes with ..." -> "come with?"
        return _sentence_case(f"what {_aux(clause)} {who} {lemma(verb)} {first}"), ""
    if be and verb not in _PAST_BE and clause.rest:
        return _sentence_case(f"{verb} {who} {clause.rest}"), ""
    return _sentence_case(f"what should I know about {who}"), ""


def yes_no(statement: str) -> str:
    """The question a person asks to check a statement they half remember ("Does the Team
    plan really cost $21 per user per month?"); every number of its first clause kept."""
    clause = parse(statement)
    numbers = re.findall(r"\d[\d,.]*", statement)
    if clause is not None and all(n in clause.rest for n in numbers):
        who = _subject(clause)
        if clause.verb in _BE or clause.verb in _MODAL:
            return _sentence_case(f"{clause.verb} {who} really {clause.rest}")
        return _sentence_case(f"{_aux(clause)} {who} really {lemma(clause.verb)} {clause.rest}")
    return f"I read that {_lower_first(statement.rstrip(' .'))}. Is that right?"


def topic(sentence: str) -> str:
    """What a fact is about, as a person would name it ("the Team plan")."""
    clause = parse(sentence)
    if clause is None or clause.subject.split()[0] in _PRONOUNS:
        return _lower_first(" ".join(sentence.split()[:4]).rstrip(" ,.;:"))
    words = _subject(clause, asker=False).split()
    while len(words) > 1 and words[-1].lower() in _ADVERBS:
        words.pop()  # "the company now has" is about the company
    return " ".join(words)


SAME_TOPIC_QUESTIONS = (
    "I'm considering {a}. What should I know about it?",
    "What are the main things to know about {a}?",
    "Is {a} a good fit for me? What does it offer?",
)
"""Questions about two facts of one page that share their subject."""
PAIR_QUESTIONS = (
    "How do {a} and {b} compare?",
    "What should I know about {a} and {b}?",
    "I'm choosing {brand}. What do {a} and {b} mean for me?",
)
"""Questions about two facts of one page, whose answer connects them."""
