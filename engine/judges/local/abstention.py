"""Abstentions: responses that decline, deflect or say they do not know.

A refusal ("I don't have reliable details about that. You may want to contact Acme Cloud
directly.") embeds close to the question's topic, so similarity alone highlights it as
matching ground truth and the local judge finds it "supported". It states nothing, so it
must count as no answer: no claims found in it, no highlight, never SUPPORTED.

Each sentence of a response is one of:

- ``abstain``: a first-person statement of not knowing or not being able to answer, found
  by rules (English, French, German, Spanish, Italian, Portuguese, Dutch) or, when vectors
  are given, by cosine to a set of refusal prototypes;
- ``deflect``: a pointer elsewhere ("contact Acme directly", "check their website");
- ``filler``: courtesy without content ("Sorry.", "Hope this helps!");
- ``content``: anything else.

A response abstains when at least one sentence abstains and no sentence is content: a
response that says "I'm not sure about X, but the Pro plan costs $20" answers something.
A deflection alone is not an abstention (pointing to support can be the right answer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from engine.embedders.base import Vectors
from engine.text import split_sentences

SentenceKind = Literal["abstain", "deflect", "filler", "content"]

_I = r"(?:i|we)"
_IM = r"(?:i'm|i am|im|we're|we are)"
_NEG = r"(?:don't|do not|dont|can't|cannot|can not|couldn't|could not|am not|'m not|m not|"
_NEG += r"won't|will not|am unable to|'m unable to|am not able to|'m not able to|have no|"
_NEG += r"haven't got|lack)"
_KNOWLEDGE = (
    r"(?:information|info|details?|data|knowledge|record|records|access|insight|visibility|"
    r"specifics|figures|answer|way of knowing|means of knowing)"
)
_ABSTAIN_EN = re.compile(
    r"\b(?:"
    rf"{_I}\s+(?:really\s+|honestly\s+|simply\s+|just\s+)?(?:don't|do not|dont)\s+know\b"
    rf"|{_IM}\s+(?:not\s+(?:sure|certain|aware)|unsure|uncertain)\b"
    rf"|(?:{_IM}|{_I})\s+(?:un)?able to (?:answer|help|assist|provide|find|share|confirm|"
    r"say|verify|determine|access|give)"
    rf"|{_I}\s+(?:can't|cannot|can not|couldn't|could not|won't|will not)\s+(?:really\s+)?"
    r"(?:answer|help|assist|provide|find|share|confirm|say|verify|determine|access|give|"
    r"comment|speak to|tell|know|be sure|offer)"
    rf"|{_IM}\s+not\s+able\s+to\b"
    rf"|{_I}\s+(?:don't|do not|dont|didn't|did not)\s+have\s+(?:any\s+|enough\s+|reliable\s+|"
    r"specific\s+|current\s+|up-to-date\s+|accurate\s+|real-time\s+|detailed\s+|verified\s+|"
    rf"the\s+|that\s+|this\s+|such\s+|much\s+)*{_KNOWLEDGE}"
    rf"|{_I}\s+(?:have|'ve)\s+no\s+(?:reliable\s+|specific\s+|such\s+)?(?:{_KNOWLEDGE}|idea|"
    r"comment|clue)"
    rf"|{_I}\s+(?:couldn't|could not|can't|cannot|was unable to|were unable to)\s+"
    r"(?:find|locate|identify)\s+(?:any\s+)?(?:reliable\s+|specific\s+|relevant\s+)?"
    r"(?:information|details|data|answer|mention)"
    r"|no comment\b"
    r"|\b(?:beyond|outside) (?:my|the scope of my) (?:knowledge|expertise)"
    r"|\bno (?:idea|clue)\b"
    r"|^not (?:sure|certain)\b"
    r"|\b(?:i|we) (?:haven't|have not) been (?:given|provided with|told)\b"
    r"|\b(?:i|we)\s*(?:would|'d) need more (?:information|details|context) to (?:answer|say|tell)"
    r"|\b(?:i|we)\s*(?:would|'d) rather not (?:guess|speculate|say)"
    r"|\b(?:outside|beyond) (?:my|our) (?:area|scope|remit)\b"
    r"|\b(?:is|isn't|is not) (?:something|anything) (?:i|we) (?:can|could) (?:speak to|comment on|"
    r"answer)"
    r"|\b(?:isn't|is not|aren't|are not) available to (?:me|us)\b"
    r"|as an ai\b"
    r"|my (?:knowledge|training data) (?:cutoff|does not|doesn't)"
    r"|(?:the|this|provided|given) (?:provided |given )?(?:context|passages?|documents?|sources?|"
    r"information) (?:does not|doesn't|do not|don't) (?:contain|provide|mention|say|include|"
    r"specify|cover|state)"
    r"|there (?:is|'s) no (?:reliable |specific |relevant |available )?(?:information|data|"
    r"details) (?:available |provided )?(?:about|on|regarding|in)"
    r"|(?:i'm|i am) sorry,? (?:but )?(?:i|we) (?:can't|cannot|can not|am unable|'m unable|"
    r"don't|do not)"
    r"|(?:it is|it's) (?:not possible|impossible) (?:for me )?to (?:say|know|tell|answer|"
    r"determine)"
    r"|unable to (?:answer|help|provide|find|determine|confirm)"
    r")",
    re.IGNORECASE,
)
_ABSTAIN_OTHER = re.compile(
    r"(?:"
    # French
    r"\bje ne (?:sais|connais) pas\b|\bje n'ai pas (?:d'|de |les |l')?(?:informations?|détails|"
    r"données|réponse)|\bje ne (?:peux|suis) pas (?:en mesure de |capable de )?(?:répondre|"
    r"vous aider|aider|confirmer|dire)|\bje ne suis pas sûr"
    # German
    r"|\bich weiß (?:es |das )?nicht\b|\bich habe keine (?:informationen|angaben|daten|"
    r"ahnung|details)|\bich kann (?:dazu |das |ihnen )?(?:keine (?:angaben|auskunft)|nicht "
    r"(?:beantworten|sagen|helfen))|\bich bin (?:mir )?nicht sicher"
    # Spanish
    r"|\bno (?:lo )?sé\b|\bno tengo (?:información|datos|detalles)|\bno puedo (?:responder|"
    r"ayudar|confirmar|decir)|\bno estoy seguro"
    # Italian
    r"|\bnon (?:lo )?so\b|\bnon ho (?:informazioni|dati|dettagli)|\bnon posso (?:rispondere|"
    r"aiutare|confermare)"
    # Portuguese
    r"|\bnão sei\b|\bnão tenho (?:informações|dados|detalhes)|\bnão posso (?:responder|ajudar)"
    # Dutch
    r"|\bik weet (?:het )?niet\b|\bik heb geen (?:informatie|gegevens|idee)|\bik kan (?:dat |"
    r"het )?niet (?:beantwoorden|zeggen)"
    r")",
    re.IGNORECASE,
)
_DEFLECT = re.compile(
    r"\b(?:contact|reach out to|get in touch with|check with|consult|ask|call|email|e-mail|"
    r"visit|refer to|check|see|look at)\b.{0,80}\b(?:directly|support|team|website|site|"
    r"official|documentation|docs|help ?desk|customer service|sales|representative|page|"
    r"provider|vendor|company|bank|advisor|professional|expert|for (?:the )?(?:latest|"
    r"up-to-date|current|accurate|more|further))"
    r"|\b(?:i (?:would|'d) )?(?:recommend|suggest) (?:contacting|checking|visiting|reaching|"
    r"consulting|asking)"
    r"|\byou (?:may|might|could|should) (?:want to |wish to )?(?:contact|check|visit|ask|consult|"
    r"reach out)",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:sorry|i'm sorry|i am sorry|apologies|my apologies|unfortunately|thanks|thank you|"
    r"thank you (?:so|very) much|thanks (?:a lot|so much)|"
    r"(?:thanks|thank you) for (?:asking|your (?:question|message|patience|interest)|"
    r"reaching out|contacting us|getting in touch)|"
    r"(?:a |that's a |what a )?(?:great|good|excellent|fair) question|"
    r"(?:i )?hope (?:this|that) helps|let me know if.*|feel free to (?:ask|reach out|contact).*|"
    r"(?:i'm |i am |i'd be |i would be |we're |we'd be )?(?:happy|glad|delighted) to "
    r"(?:help|assist).*|is there anything else.*|anything else i can (?:help|do).*|"
    r"how can i (?:help|assist)(?: you)?(?: today)?|"
    r"(?:hello|hi|hey|greetings|good (?:morning|afternoon|evening)|dear [\w .]{1,40})"
    r"(?: there| everyone| all| team| [A-Z][a-z]+)?|"
    r"have a (?:great|good|nice|wonderful) (?:day|week|weekend|evening)|"
    r"here(?:'s| is| are) (?:what (?:i|we) (?:found|know|have)|(?:the |some |a )?(?:answer|"
    r"details|information|summary|overview))|sure|certainly|of course|absolutely|"
    r"(?:best|kind|warm) regards|cheers|ok|okay)"
    r"[\s.!,:;]*$",
    re.IGNORECASE,
)
_KNOW_OF = re.compile(
    r"\bknow (?:of )?(?:any|no)\b.*\b(?:than|other than|besides|except|apart from)\b",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|that said)\b[, ]+(.*)$", re.IGNORECASE)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|(?<![\w])'[^']{4,}'(?![\w])")
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)

ABSTENTION_PROTOTYPES: tuple[str, ...] = (
    "I don't know the answer to that.",
    "I'm not sure about that.",
    "I do not have information about this.",
    "I don't have reliable details about that.",
    "I'm sorry, but I can't help with that request.",
    "I am unable to provide an answer to this question.",
    "I have no information on that topic.",
    "I cannot answer that question.",
    "There is no information available about this.",
    "The provided context does not contain the answer.",
    "I couldn't find anything about that.",
    "That is outside what I know.",
    "That's beyond my knowledge.",
    "That information isn't available to me.",
    "I have no clue.",
    "This is not something I can speak to.",
    "I'm afraid I can't say.",
    "I have no way to check that.",
    # The same meanings in the other languages answers arrive in: the embedder compares a
    # sentence with refusals of its own language, whatever words it uses.
    "No lo sé.",
    "No tengo información sobre eso.",
    "Lo siento, no puedo responder a esa pregunta.",
    "No dispongo de datos sobre este tema.",
    "Desconozco la respuesta.",
    "Je ne sais pas.",
    "Je n'ai pas d'informations à ce sujet.",
    "Désolé, je ne peux pas répondre à cette question.",
    "Je ne dispose pas de ces informations.",
    "J'ignore la réponse.",
    "Das weiß ich leider nicht.",
    "Dazu habe ich keine Informationen.",
    "Es tut mir leid, diese Frage kann ich nicht beantworten.",
    "Darüber liegen mir keine Angaben vor.",
    "Ich kann Ihnen dazu leider keine Auskunft geben.",
    "Non lo so.",
    "Non ho informazioni su questo argomento.",
    "Mi dispiace, non sono in grado di rispondere a questa domanda.",
    "Non dispongo di questi dati.",
    "Purtroppo non conosco la risposta.",
    "Não sei.",
    "Não tenho informações sobre isso.",
    "Desculpe, não consigo responder a essa pergunta.",
    "Não disponho desses dados.",
    "Infelizmente desconheço a resposta.",
)
"""Refusals a sentence is compared with when vectors are available."""

PROTOTYPE_THRESHOLD = 0.65
"""Cosine to the nearest prototype at which a sentence counts as a refusal (MiniLM).

Measured on 20 answering sentences (first-person ones such as "I can't stress enough how
cheap it is", and sentences about "information" or "details"): at most 0.38. Refusals the
rules miss and that are not prototypes themselves: "Not sure." 0.62, "I haven't been given
that information." 0.71, "I'm afraid that's not something I have details on." 0.53."""


@dataclass(frozen=True)
class Abstention:
    """Whether a response abstains, and the kind of each of its sentences."""

    abstained: bool
    kinds: tuple[SentenceKind, ...]
    reason: str
    """The sentence that abstained (empty when none did)."""


def _has_content(text: str) -> bool:
    """At least three words or any number: more than a courtesy fragment."""
    tokens = _WORD.findall(text)
    return len(tokens) >= 3 or any(t.isdigit() for t in tokens)


def sentence_kind(sentence: str, prototype_cosine: float | None = None) -> SentenceKind:
    """The kind of one sentence; ``prototype_cosine`` is its best cosine to a prototype."""
    text = sentence.strip().replace("’", "'")
    if not text or _FILLER.match(text):
        return "filler"
    # Quoted speech is reported, not said: 'He said, "I cannot tell a lie"' answers.
    text = _QUOTED.sub(" ", text).strip() or text
    cue = _ABSTAIN_EN.search(text) or _ABSTAIN_OTHER.search(text)
    contrast = _CONTRAST.search(text)
    if cue is not None:
        # "I'm not sure about the date, but the price is $20": the answer follows the contrast.
        if (
            contrast is not None
            and contrast.start() >= cue.end()
            and _has_content(contrast.group(1))
            and not (
                _ABSTAIN_EN.search(contrast.group(1)) or _ABSTAIN_OTHER.search(contrast.group(1))
            )
        ):
            return "content"
        if _KNOW_OF.search(text):  # "I don't know of any plan cheaper than $5": an answer
            return "content"
        return "abstain"
    # Prototypes only for short sentences without numbers: refusals are short and state no
    # figures, and MiniLM ranks any sentence about "information" somewhat close to them.
    if (
        prototype_cosine is not None
        and prototype_cosine >= PROTOTYPE_THRESHOLD
        and len(text.split()) <= 16
        and not any(ch.isdigit() for ch in text)
    ):
        return "abstain"
    if _DEFLECT.search(text):
        return "deflect"
    return "content"


def classify(
    sentences: Sequence[str], prototype_cosines: Sequence[float] | None = None
) -> Abstention:
    """Abstention of a response given its sentences (and each one's best prototype cosine)."""
    cosines: Sequence[float | None] = (
        prototype_cosines if prototype_cosines is not None else [None] * len(sentences)
    )
    kinds = tuple(sentence_kind(s, c) for s, c in zip(sentences, cosines, strict=True))
    if kinds and all(k == "filler" for k in kinds):
        # "Hello! Thanks for asking.": courtesy alone answers nothing
        return Abstention(True, kinds, "courtesy only")
    abstained = "abstain" in kinds and "content" not in kinds
    reason = next((s for s, k in zip(sentences, kinds, strict=True) if k == "abstain"), "")
    return Abstention(abstained, kinds, reason if abstained else "")


def is_courtesy(sentence: str) -> bool:
    """A greeting, thanks, offer of help or sign-off: never a claim."""
    return bool(_FILLER.match(sentence.strip().replace("\u2019", "'")))


def prototype_cosines(sentence_vectors: Vectors, prototype_vectors: Vectors) -> list[float]:
    """Best cosine of each sentence vector to the prototype vectors."""
    if len(sentence_vectors) == 0 or len(prototype_vectors) == 0:
        return [0.0] * len(sentence_vectors)
    return [float(v) for v in np.max(sentence_vectors @ prototype_vectors.T, axis=1)]


def detect_abstention(
    response: str,
    embed: Callable[[Sequence[str]], Vectors] | None = None,
) -> Abstention:
    """Classify the sentences of ``response``; ``embed`` (optional) adds the prototype check.

    ``embed`` maps texts to L2-normalised vectors; it is called once with the sentences
    and the prototypes together.
    """
    sentences = [s.text for s in split_sentences(response)]
    if not sentences:
        return Abstention(False, (), "")
    if embed is None:
        return classify(sentences)
    vectors = embed([*sentences, *ABSTENTION_PROTOTYPES])
    n = len(sentences)
    return classify(sentences, prototype_cosines(vectors[:n], vectors[n:]))


_SOURCE = (
    r"(?:context|documentation|docs|document|documents|page|pages|source|sources|text|"
    r"article|passage|passages|website|site|manual|policy|record|records|data|information)"
)
_NOT_STATED = re.compile(
    rf"\b(?:{_SOURCE}\s+(?:does|do|did)\s*(?:not|n't)\s+(?:say|state|mention|specify|"
    r"include|provide|contain|cover|list|give|indicate|disclose)"
    r"|(?:is|are|was|were)\s+not\s+(?:stated|mentioned|specified|given|provided|listed|"
    r"disclosed|known|available|documented)"
    r"|(?:no|not enough|insufficient)\s+(?:information|data|details?|evidence)\s+"
    r"(?:is\s+|are\s+)?(?:given|available|provided|about|on|to)"
    r"|cannot be (?:determined|answered|known)|(?:is|are)\s+unknown|unanswerable)\b",
    re.IGNORECASE,
)


def reference_abstains(
    sentences: Sequence[str], prototype_cosines: Sequence[float] | None = None
) -> bool:
    """Whether a reference answer says the answer is not known. A reference is written about
    the sources, not in the first person ("The documentation does not say where backups are
    stored"), so besides the response rules a sentence counts when it says the sources do
    not state the answer; every sentence must be such a one or a courtesy."""
    if not sentences:
        return False
    kinds = classify(sentences, prototype_cosines).kinds
    for sentence, kind in zip(sentences, kinds, strict=True):
        if kind == "content" and not _NOT_STATED.search(sentence.replace("\u2019", "'")):
            return False
    return any(k != "filler" for k in kinds)
