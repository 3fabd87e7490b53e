"""Text-overlap graders: ``rouge-l``, ``bleu``, ``chrf`` and ``levenshtein``.

Each compares the output with the case's expected answer (or a fixed ``value``) and
scores 0-1; the output passes at ``score >= threshold``. They call nothing remote, so a
run can use them on every sample, and ``--cascade`` can lean on them.

Libraries, where a well-kept one fits:
- BLEU and chrF: ``sacrebleu`` (the reference implementation WMT reports with; its
  default ``13a`` tokenizer and ``exp`` smoothing for sentence BLEU).
- Levenshtein: ``rapidfuzz`` (``Levenshtein.normalized_similarity``: 1 - distance / the
  longer length, so kitten/sitting, distance 3, scores 4/7).
- ROUGE-L is written here: the reference package (``rouge-score``) pulls in nltk and
  absl for a tokenizer of one regular expression and an LCS of a dozen lines. This one
  follows rouge-score's defaults exactly (lower-case, non-alphanumerics to spaces, no
  stemming, F1 of LCS precision and recall) and is tested against it.
"""

from __future__ import annotations

import re

from engine.graders.base import GradeInput, GraderResult, SyncGrader, passes
from engine.graders.options import (
    OVERLAP_THRESHOLDS,
    BleuOptions,
    ChrfOptions,
    OverlapOptions,
    RougeLOptions,
)
from engine.graders.spec import GraderSpec

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def rouge_tokens(text: str) -> list[str]:
    """rouge-score's default tokenizer: lower-case, non-alphanumerics split, no stemming."""
    return [t for t in _NON_ALNUM.split(text.lower()) if t]


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists (one row of the table)."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0  # table[i-1][j-1]
        for j, y in enumerate(b, start=1):
            current = row[j]
            row[j] = previous + 1 if x == y else max(row[j], row[j - 1])
            previous = current
    return row[-1]


def rouge_l(output: str, reference: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of ROUGE-L (Lin 2004): LCS / output length, LCS / reference
    length, and their harmonic mean; all 0 when either side has no tokens."""
    hyp, ref = rouge_tokens(output), rouge_tokens(reference)
    if not hyp or not ref:
        return 0.0, 0.0, 0.0
    lcs = lcs_length(hyp, ref)
    precision, recall = lcs / len(hyp), lcs / len(ref)
    f1 = 0.0 if lcs == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


class OverlapGrader(SyncGrader):
    """Scores the output's overlap with a reference text by one measure."""

    def __init__(self, spec: GraderSpec) -> None:
        super().__init__(spec)
        self._threshold = (
            spec.threshold if spec.threshold is not None else OVERLAP_THRESHOLDS[spec.type]
        )
        options = spec.options
        assert isinstance(options, OverlapOptions)
        self._options = options

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Score one output against the reference."""
        reference = self._options.value if self._options.value is not None else sample.expected
        output = sample.output
        if not reference.strip():
            return GraderResult(passed=False, score=0.0, reason="no reference text to compare")
        if self._options.case == "insensitive":
            output, reference = output.casefold(), reference.casefold()
        score, detail = self.measure(output, reference)
        score = min(1.0, max(0.0, score))
        passed = passes(score, self._threshold)
        return GraderResult(
            passed=passed,
            score=score,
            reason=f"{self.spec.type} {score:.3f} ({detail}; "
            f"{'at or above' if passed else 'below'} threshold {self._threshold:g})",
        )

    def measure(self, output: str, reference: str) -> tuple[float, str]:
        """(score 0-1, a few words on how it was computed)."""
        kind, options = self.spec.type, self._options
        if kind == "rouge-l":
            assert isinstance(options, RougeLOptions)
            p, r, f = rouge_l(output, reference)
            chosen = {"f": f, "precision": p, "recall": r}[options.measure]
            return chosen, f"LCS precision {p:.2f}, recall {r:.2f}, F1 {f:.2f}"
        if kind == "bleu":
            import sacrebleu

            assert isinstance(options, BleuOptions)
            bleu = sacrebleu.sentence_bleu(
                output, [reference], smooth_method=options.smooth, tokenize=options.tokenize
            )
            return bleu.score / 100.0, f"BP {bleu.bp:.2f}, precisions {_pcts(bleu.precisions)}"
        if kind == "chrf":
            from sacrebleu.metrics.chrf import CHRF

            assert isinstance(options, ChrfOptions)
            metric = CHRF(
                char_order=options.char_order, word_order=options.word_order, beta=options.beta
            )
            chrf = metric.sentence_score(output, [reference])
            return chrf.score / 100.0, f"char order {options.char_order}, beta {options.beta}"
        from rapidfuzz.distance import Levenshtein

        distance = Levenshtein.distance(output, reference)
        return Levenshtein.normalized_similarity(output, reference), f"{distance} edits"


def _pcts(values: list[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)
