"""Records: one model per lake table and warehouse table, registered in ``LAKE_TABLES``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engine.models.base import (
    AttributionType,
    ClaimsSource,
    ClaimStatus,
    Frozen,
    Importance,
    RunStatus,
    Tier,
    Verdict,
)
from engine.models.conversation_records import ConversationScoreRecord, TurnRecord
from engine.models.drift_records import DriftAnchorRecord, JudgeDriftRecord
from engine.models.judge_records import JudgeAskRecord
from engine.models.lineage_records import CandidateLineageRecord
from engine.models.reviews import ReviewRecord, RunLabelRecord
from engine.models.testset_records import TestSetCaseRecord


class RunRecord(Frozen):
    """One state of a run; the warehouse keeps the latest state per ``run_id``."""

    run_id: str
    """Identifier of the run (sortable by start time)."""
    name: str
    """Human name of the run."""
    started_at: datetime
    """When the run started (UTC, naive)."""
    finished_at: datetime | None = None
    """When the run ended (UTC); null while it runs."""
    status: RunStatus
    """running, completed, failed, cancelled or interrupted."""
    iterations: int
    """Iterations requested."""
    test_set: str
    """Path of the test set."""
    test_set_hash: str = ""
    """sha256 of the test-set file."""
    test_set_name: str = ""
    """Name of the test set (the file name without its extension); empty for runs written
    before test sets had versions."""
    test_set_cases_hash: str = ""
    """sha256 of the test set's cases (ids and contents, not the file's layout): each
    distinct value per ``test_set_name`` is a version (view ``testset_versions``)."""
    series: str | None = None
    """The series named with ``--series``; None: derived from the name (view ``run_series``)."""
    config: str
    """The ``RunConfig`` as JSON (no secrets: keys are read from the environment only)."""
    judge: str
    """Judge that scored the run, with its model (``local`` when deterministic); the first
    judge of a jury (``config`` names the others)."""
    judge_temperature: float | None = None
    """Sampling temperature the run's LLM judges were asked at; null for the local judge."""
    embedder: str
    """Embedder that scored the run, with its model."""
    claim_threshold: float | None = None
    """Cosine threshold the analyzer used to count a claim as found (belongs to the embedder)."""
    judge_prompt_version: str = ""
    """Version of the judge's prompt files (``local`` for the deterministic judge)."""
    version: str
    """evalhouse version that produced the run."""
    git_commit: str | None = None
    """Commit of the working directory the run was launched from, when known."""
    host: str = ""
    """Machine the run ran on."""
    samples: int = 0
    """Samples in the test set (per iteration)."""
    updated_at: datetime
    """When this state was written (UTC); the latest state wins."""


class ResultRecord(Frozen):
    """The scores of one sample in one iteration of one run."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number, from 1."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate (prompt variant) that produced the response; empty for single-candidate runs."""
    domain: str
    """Domain of the test case."""
    ai_provider: str
    """Who produced the response."""
    query: str
    """The question."""
    response: str
    """The response that was scored (untrusted text)."""
    tags: list[str] = Field(default_factory=list)
    """Tags of the test case."""
    accuracy: float | None = None
    """Accuracy 0-100: cosine of response and expected answer, credited for the reference
    claims it states and capped below fair when it contradicts one; null on error."""
    accuracy_tier: Tier | None = None
    """Tier of accuracy."""
    accuracy_similarity: float | None = None
    """The seed's accuracy alone: cosine of the response with the reference, 0-100.
    ``accuracy`` is this, credited for the reference claims the response states and
    lowered for the ones it contradicts (docs/scoring.md)."""
    completeness: float | None = None
    """Completeness 0-100: expected claims found / total."""
    completeness_tier: Tier | None = None
    """Tier of completeness."""
    attribution: float | None = None
    """Attribution 0-100: URL 100, domain 75, brand 50, +bonus per extra mention, capped."""
    attribution_tier: Tier | None = None
    """Tier of attribution."""
    coverage_percent: float | None = None
    """Share (0-100) of response characters that match a ground-truth passage."""
    judge_faithfulness: float | None = None
    """Judge rubric faithfulness 1-5."""
    judge_completeness: float | None = None
    """Judge rubric completeness 1-5."""
    judge_reasoning: str | None = None
    """The judge's reasoning for both rubric scores."""
    faithfulness_reasoning: str | None = None
    """The judge's reasoning for its faithfulness score alone."""
    completeness_reasoning: str | None = None
    """The judge's reasoning for its completeness score alone."""
    passed: bool | None = None
    """Rubric pass: both judge scores at least 4. False as well when the run sets
    ``analyzer.completeness.require_all_required`` and a required claim is missing (flag
    ``missing_required_claim``)."""
    claim_faithfulness: float | None = None
    """Supported claims / claims of the response, 0-1 (empty response = 1.0)."""
    rag_correctness: float | None = None
    """RAG correctness 1-5 against the reference answer."""
    rag_faithfulness: float | None = None
    """RAG faithfulness 1-5 (1 + 4 x supported/total)."""
    rag_precision: float | None = None
    """RAG context precision 1-5; null when there is no context (the paper's NaN)."""
    rag_recall: float | None = None
    """RAG context recall 1-5."""
    rag_relevance: float | None = None
    """RAG answer relevance 1-5."""
    rag_overall: float | None = None
    """Weighted RAG score 1-5."""
    overall: float | None = None
    """Judge overall: mean of judge faithfulness and completeness, 1-5."""
    latency_ms: float | None = None
    """Time the target took to answer (null for recorded responses)."""
    input_tokens: int | None = None
    """Tokens sent to the target."""
    output_tokens: int | None = None
    """Tokens the target produced."""
    judge_input_tokens: int = 0
    """Tokens sent to judges and embedders for this sample."""
    judge_output_tokens: int = 0
    """Tokens judges produced for this sample."""
    scoring_ms: float | None = None
    """Time spent scoring the sample."""
    cost_usd: float = 0.0
    """Cost of the sample: target plus judges, in US dollars; an error row keeps what the
    calls answered before the error cost (its judge tokens too)."""
    error: str | None = None
    """Why the sample could not be scored; null when it was."""
    flags: list[str] = Field(default_factory=list)
    """Review flags: empty_response, abstained, keyword_fallback, response_truncated, ..."""
    abstained: bool | None = None
    """True when the response declines, deflects or says it does not know (no answer)."""
    sample_hash: str = ""
    """sha256 of the test case, for resume and re-analysis."""
    reanalysis_of: str | None = None
    """Run id of the record this one re-analyzed with new ground truth."""
    scored_at: datetime
    """When the sample was scored (UTC)."""
    scored_by: str | None = None
    """Which judge scored the sample: ``local`` or ``llm`` (``--cascade`` sends only the
    samples the local judge cannot decide to the LLM); null without judge scores."""


class ClaimRecord(Frozen):
    """One expected claim of one sample: found in the response, contradicted or missing."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the response."""
    claim_id: str
    """Id of the expected claim."""
    claim_text: str
    """The expected claim."""
    importance: Importance
    """required, expected or optional."""
    found: bool
    """Whether the response states the claim (``status = 'found'``)."""
    evidence: str | None = None
    """The response text that states it (``response[response_start:response_end]``)."""
    similarity: float
    """Best cosine between the claim and a response span."""
    response_start: int | None = None
    """Start offset of the evidence in the response (characters)."""
    response_end: int | None = None
    """End offset (exclusive) of the evidence."""
    status: ClaimStatus | None = None
    """found, contradicted (the closest span states something else) or missing."""
    rule: str | None = None
    """What decided a contradicted claim: ``verifier`` or a contradiction rule (number,
    unit, date, negation, ...)."""
    claims_source: ClaimsSource | None = None
    """given (written in the test set) or derived (cut from the reference answer)."""
    confidence: float | None = None
    """The verifier's probability of the status (null when rules decided)."""


class HighlightRecord(Frozen):
    """A response span and the ground-truth passage it matches (or none)."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the response."""
    response_start: int
    """Start offset of the span in the response."""
    response_end: int
    """End offset (exclusive) of the span."""
    chunk_id: str | None = None
    """Ground-truth passage it matches; null for a span that matches none."""
    page_url: str | None = None
    """URL of that passage's page."""
    matched_text: str | None = None
    """The ground-truth text that matched."""
    similarity: float
    """Cosine between the span and the passage (best passage when unmatched)."""


class AttributionRecord(Frozen):
    """One mention that credits the source: a URL, the domain or a brand."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the response."""
    type: AttributionType
    """url, domain or brand."""
    matched_text: str
    """The mention as written in the response."""
    response_start: int
    """Start offset of the mention."""
    response_end: int
    """End offset (exclusive) of the mention."""
    context: str = ""
    """Surrounding text of the mention."""


class VerdictRecord(Frozen):
    """A claim of the response checked against the context."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the response."""
    claim_index: int = 0
    """Position of the claim in the response, from 0."""
    claim_text: str
    """The claim extracted from the response."""
    verdict: Verdict
    """SUPPORTED, CONTRADICTED or NOT_ENOUGH_INFO."""
    evidence: str = ""
    """The context text (or judge explanation) behind the verdict."""
    similarity: float | None = None
    """Best cosine between claim and context (local judge)."""
    rule: str | None = None
    """Contradiction rule that fired (negation, number, date, entity, antonym), if any."""
    response_start: int | None = None
    """Start offset of the claim in the response, when it is a verbatim span."""
    response_end: int | None = None
    """End offset (exclusive) of the claim."""
    confidence: float | None = None
    """Probability that the verdict is right, as the deciding model gave it (a verifier's
    class probability, the local combiner's support probability); null for a verdict of a
    rule or of a judge that gives none."""


class IterationMetricsRecord(Frozen):
    """Aggregates of one iteration of a run (answer-synthesis metrics and cost)."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    candidate: str = ""
    """Candidate the metrics are for."""
    samples: int
    """Rows scored in the iteration, errors included."""
    errors: int
    """Rows with an error."""
    accuracy_mean: float | None = None
    """Mean accuracy 0-100."""
    completeness_mean: float | None = None
    """Mean completeness 0-100."""
    attribution_mean: float | None = None
    """Mean attribution 0-100."""
    judge_faithfulness_mean: float | None = None
    """Mean judge faithfulness 1-5."""
    judge_completeness_mean: float | None = None
    """Mean judge completeness 1-5."""
    faithfulness_pass_rate: float | None = None
    """Share (0-1) of samples with judge faithfulness >= 4."""
    completeness_pass_rate: float | None = None
    """Share (0-1) of samples with judge completeness >= 4."""
    pass_rate: float | None = None
    """Share (0-1) of samples passing both."""
    claim_faithfulness_mean: float | None = None
    """Mean claim faithfulness 0-1."""
    rag_overall_mean: float | None = None
    """Mean RAG overall 1-5."""
    input_tokens: int = 0
    """All tokens sent (target and judges)."""
    output_tokens: int = 0
    """All tokens produced."""
    cost_usd: float = 0.0
    """Cost of the iteration."""
    low_faithfulness: str = "{}"
    """Low-faithfulness analysis as JSON: counts and examples per category, insight text."""
    finished_at: datetime
    """When the iteration ended (UTC)."""


class GraderScoreRecord(Frozen):
    """One grader's verdict on one sample's output."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the output."""
    grader: str
    """Grader id."""
    score: float | None = None
    """Score 0-1; null when the grader failed."""
    passed: bool | None = None
    """Whether the grader passed the output."""
    reason: str = ""
    """Why, in a sentence."""
    weight: float = 1.0
    """Weight of the grader in the candidate's weighted score."""


class SampleScoreRecord(Frozen):
    """One named metric a scorer gave one sample, for scorers whose metrics have no column
    of ``results`` (added scorers write here without a schema change)."""

    run_id: str
    """Run the row belongs to."""
    iteration: int
    """Iteration number."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate that produced the response."""
    scorer: str
    """Name of the scorer that gave the metric."""
    metric: str
    """Name of the metric (unique per scorer)."""
    value: float | None = None
    """The metric's value; null when it does not apply."""
    label: str | None = None
    """A categorical result (``pass``, ``refusal``, ...), when the metric has one."""
    reason: str = ""
    """Why, in a sentence."""


PairWinner = Literal["a", "b", "tie"]


class PairwiseRecord(Frozen):
    """One head-to-head judgment: which of two runs answered one case better
    (``evalhouse compare-runs A B``)."""

    comparison_id: str
    """The ``compare-runs`` invocation (sortable by time); the lake partition's run_id."""
    run_a: str
    """The first run named on the command line."""
    run_b: str
    """The second run."""
    iteration: int
    """Iteration of both runs whose answers were compared."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Run A's candidate whose answers were compared (empty for a run's own responses)."""
    candidate_b: str = ""
    """Run B's candidate (the same as ``candidate`` unless two candidates were compared,
    ``compare-runs RUN:PROMPT_1 RUN:PROMPT_2``)."""
    domain: str | None = None
    """Domain of the case (from run A)."""
    winner: PairWinner | None = None
    """``a``, ``b`` or ``tie``; a pair judged differently in the two orders is a tie.
    Null when the judge failed (see ``error``)."""
    consistent: bool | None = None
    """Whether both orders (A shown first, B shown first) gave the same winner; False pairs
    were recorded as ties (position bias)."""
    a_first: PairWinner | None = None
    """The judgment with A's answer shown first."""
    b_first: PairWinner | None = None
    """The judgment with B's answer shown first, in terms of runs (``a`` = run A won)."""
    score_a: float | None = None
    """Run A's quality score the local rule compared (mean of accuracy, completeness and
    coverage_percent, 0-100); null for LLM judges."""
    score_b: float | None = None
    """Run B's quality score (local rule)."""
    reason: str = ""
    """Why: the local rule's figures, or the judge's reasons in both orders."""
    judge: str
    """``local`` (the deterministic rule) or the LLM judge (``openai:MODEL``, ...)."""
    input_tokens: int = 0
    """Tokens sent to the judge for this pair, both orders (0 for ``local`` and for
    answers served from the judge cache)."""
    output_tokens: int = 0
    """Tokens the judge answered for this pair, both orders."""
    cost_usd: float = 0.0
    """What judging this pair cost, both orders (0 without a known price)."""
    error: str | None = None
    """Why the pair could not be judged; null when it was."""
    compared_at: datetime
    """When the comparison ran (UTC, naive)."""


class CaseRecord(Frozen):
    """One test case a run scored, as the run read it: the warehouse keeps the question,
    the reference, the claims, the contexts and the ground truth, so pages, exports and
    analysts never need the test-set file again (it may have moved or changed)."""

    run_id: str
    """Run that scored the case."""
    sample_id: str
    """Test-case id."""
    sample_hash: str
    """sha256 of the case's canonical JSON (``results.sample_hash``)."""
    domain: str
    """Domain the case is scored under."""
    query: str
    """The question."""
    reference: str = ""
    """The expected answer's text (empty when the case gives only claims or passages)."""
    case_json: str
    """The whole case in the native test-set format, as JSON (claims, ground truth with
    chunk ids and URLs, contexts, brands, tags, metadata)."""


class AlertRecord(Frozen):
    """One change of an alert rule's state for a series, evaluated after a run: it began
    to fire, or it cleared. A rule still firing (or still quiet) after the next run
    writes nothing, so a breach is announced once."""

    alert_id: str
    """Id of this state change (unique)."""
    run_id: str
    """The run whose metrics were evaluated."""
    series: str
    """The run's series: a rule fires and clears per series."""
    rule: str
    """The rule's name (``alerts:`` in the run config)."""
    metric: str
    """The metric the rule watches (a ``check`` metric name)."""
    domain: str | None = None
    """The domain the rule watches; null for the whole run."""
    state: Literal["firing", "cleared"]
    """``firing`` when the metric crossed the threshold, ``cleared`` when it came back."""
    value: float | None = None
    """The metric's value in the run."""
    threshold: float
    """The rule's minimum or maximum (0 for a change against the baseline)."""
    kind: Literal["min", "max", "worse_than_baseline"] = "min"
    """What the rule tests: a minimum, a maximum, or the change against the series'
    baseline beyond noise (``value`` is then the upper end of its 95% interval)."""
    message: str
    """The text posted to the webhook (Slack's ``text``)."""
    notified: bool = False
    """Whether the webhook accepted the post (false without a webhook)."""
    error: str | None = None
    """Why the post failed; null when it did not."""
    evaluated_at: datetime
    """When the rule was evaluated (UTC, naive)."""


LAKE_TABLES: dict[str, type[Frozen]] = {
    "runs": RunRecord,
    "cases": CaseRecord,
    "results": ResultRecord,
    "claims": ClaimRecord,
    "highlights": HighlightRecord,
    "attributions": AttributionRecord,
    "verdicts": VerdictRecord,
    "judge_asks": JudgeAskRecord,
    "iteration_metrics": IterationMetricsRecord,
    "grader_scores": GraderScoreRecord,
    "sample_scores": SampleScoreRecord,
    "pairwise": PairwiseRecord,
    "turns": TurnRecord,
    "conversation_scores": ConversationScoreRecord,
    "run_labels": RunLabelRecord,
    "reviews": ReviewRecord,
    "alerts": AlertRecord,
    "drift_anchors": DriftAnchorRecord,
    "judge_drift": JudgeDriftRecord,
    "candidate_lineage": CandidateLineageRecord,
    "testset_cases": TestSetCaseRecord,
}
"""Every lake table and the record model that defines its columns, in load order."""


class SampleKey(Frozen):
    """The key every per-sample record carries."""

    run_id: str
    """Run id."""
    iteration: int
    """Iteration number, from 1."""
    sample_id: str
    """Test-case id."""
    candidate: str = ""
    """Candidate id; empty for single-candidate runs."""
