"""Graders built on evalhouse's own analysis: ``is-refusal``, ``factual-correctness``, ``nli``.

* ``is-refusal``: the abstention detector's rules (``engine.judges.local.abstention``) on the
  output; score 1 and pass when it declines, deflects or says it does not know. No model.
* ``factual-correctness`` (Ragas, as the eval-harness write-up defines it): the output and
  the expected answer are each split into claims by the judge's claim extraction (the
  case's given claims stand for the expected answer's when it has them); each output claim
  is verified against the expected answer (SUPPORTED is a true positive) and each expected
  claim against the output (SUPPORTED is covered). precision = TP / output claims, recall =
  covered / expected claims, F1 = 2PR / (P + R) (0 when both are 0); ``mode`` picks the
  score, F1 by default.
* ``nli``: the output split into sentences, each verified against the case's contexts;
  score = sentences SUPPORTED / sentences.

The judged two use the run's judge (or their own ``judge:``): with the local judge, claims
are its sentences and clauses and each verdict is the verifier's decision.
"""

from __future__ import annotations

from engine.graders.base import GradeInput, GraderError, GraderResult, SyncGrader
from engine.graders.judged import JudgedGrader, _verify_all
from engine.graders.options import FactualCorrectnessOptions
from engine.graders.spec import GraderSpec
from engine.judges.base import Usage
from engine.judges.local.abstention import detect_abstention
from engine.text import split_sentences


class IsRefusalGrader(SyncGrader):
    """Pass (score 1) when the output is a refusal or an "I don't know"."""

    def grade_sync(self, sample: GradeInput) -> GraderResult:
        """Run the abstention detector's rules on the output."""
        found = detect_abstention(sample.output)
        if found.abstained:
            return GraderResult(passed=True, score=1.0, reason=f"refuses: {_quoted(found.reason)}")
        if not sample.output.strip():
            return GraderResult(passed=False, score=0.0, reason="the output is empty")
        return GraderResult(passed=False, score=0.0, reason="answers: no sentence declines")


def _quoted(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def f1(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall; 0 when both are 0."""
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


class FactualCorrectnessGrader(JudgedGrader):
    """Claim precision, recall and F1 of the output against the expected answer."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        self._needs_judge()
        assert isinstance(spec.options, FactualCorrectnessOptions)
        self._mode = spec.options.mode

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Extract both claim sets, verify each against the other side."""
        judge = self._needs_judge()
        given = [c.text for c in sample.case.expected_answer.claims]
        if not given and not sample.expected.strip():
            raise GraderError(
                f"factual-correctness grader {self.id!r}: case {sample.case.id!r} has no "
                "expected answer or claims"
            )
        extracted = await self._call(lambda: judge.extract_claims(sample.output))
        usage: Usage = extracted.usage
        output_claims = [c.text for c in extracted.claims]
        if given:
            expected_claims = given
        else:
            reference = await self._call(lambda: judge.extract_claims(sample.expected))
            expected_claims, usage = [c.text for c in reference.claims], usage + reference.usage
        reference_text = sample.expected.strip() or " ".join(given)
        correct = await _verify_all(self, judge, output_claims, [reference_text])
        covered = await _verify_all(self, judge, expected_claims, [sample.output])
        usage = sum((v.usage for v in [*correct, *covered]), usage)
        tp = sum(v.verdict == "SUPPORTED" for v in correct)
        found = sum(v.verdict == "SUPPORTED" for v in covered)
        precision = tp / len(output_claims) if output_claims else 0.0
        recall = found / len(expected_claims) if expected_claims else 0.0
        figures = {"precision": precision, "recall": recall, "f1": f1(precision, recall)}
        score = figures[self._mode]
        reason = (
            f"precision {precision:.2f}, recall {recall:.2f}, F1 {figures['f1']:.2f} "
            f"({self._mode} scored): {tp} of {len(output_claims)} output claims in the "
            f"expected answer, {found} of {len(expected_claims)} expected claims in the output"
        )
        missed = [
            c for c, v in zip(expected_claims, covered, strict=True) if v.verdict != "SUPPORTED"
        ]
        if missed:
            reason += "; missing: " + "; ".join(_quoted(m, 80) for m in missed[:3])
        return self._result(score, reason, usage)


class NliGrader(JudgedGrader):
    """Share of the output's sentences the contexts support."""

    def __init__(self, spec: GraderSpec, judge: object | None) -> None:
        super().__init__(spec, judge)
        self._needs_judge()

    async def grade(self, sample: GradeInput) -> GraderResult:
        """Verify each output sentence against the case's contexts."""
        judge = self._needs_judge()
        context = list(sample.case.effective_context)
        if not any(c.strip() for c in context):
            raise GraderError(f"nli grader {self.id!r}: case {sample.case.id!r} has no context")
        sentences = [s.text.strip() for s in split_sentences(sample.output) if s.text.strip()]
        if not sentences:
            raise GraderError(f"nli grader {self.id!r}: the output has no sentence to verify")
        verdicts = await _verify_all(self, judge, sentences, context)
        usage = sum((v.usage for v in verdicts), Usage())
        unsupported = [
            s for s, v in zip(sentences, verdicts, strict=True) if v.verdict != "SUPPORTED"
        ]
        supported = len(sentences) - len(unsupported)
        reason = f"{supported} of {len(sentences)} output sentences supported by the context"
        if unsupported:
            reason += "; not supported: " + "; ".join(_quoted(s, 80) for s in unsupported[:3])
        return self._result(supported / len(sentences), reason, usage)
