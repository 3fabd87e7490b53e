"""The schema of evalhouse: every record that crosses a boundary is defined here.

These frozen pydantic models are the single source of truth. The Parquet schema of
the lake (``engine.lake``) and the DuckDB DDL of the warehouse (``warehouse.schema``)
are derived from them; a golden test pins the DDL. Field docstrings are the
documentation analysts read in ``warehouse/README.md``.

Two families live here:

* **inputs**: the native test-set format (``TestCase`` and its parts) and run
  configuration (``RunConfig``, ``AnalyzerConfig``, ``TierThresholds``);
* **records**: one model per warehouse table (``ResultRecord`` -> ``results``, ...),
  registered in ``LAKE_TABLES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine.errors import InputError

Importance = Literal["required", "expected", "optional"]
Tier = Literal["excellent", "good", "fair", "poor"]
Verdict = Literal["SUPPORTED", "CONTRADICTED", "NOT_ENOUGH_INFO"]
AttributionType = Literal["url", "domain", "brand"]
ClaimStatus = Literal["found", "contradicted", "missing"]
ClaimsSource = Literal["given", "derived"]
RunStatus = Literal["running", "completed", "failed", "cancelled", "interrupted"]


class Frozen(BaseModel):
    """Base for every model: immutable, and unknown fields are an error, not ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


# --------------------------------------------------------------------------- inputs


class ExpectedClaim(Frozen):
    """One fact the expected answer contains and a good response should state."""

    id: str = Field(min_length=1)
    """Identifier of the claim, unique within its test case (for example ``c1``)."""
    text: str = Field(min_length=1)
    """The claim as a short declarative sentence."""
    importance: Importance = "required"
    """How much the claim matters: ``required``, ``expected`` or ``optional``."""


class ExpectedAnswer(Frozen):
    """The answer a correct response should give."""

    text: str = ""
    """The reference answer as prose; used for accuracy."""
    claims: tuple[ExpectedClaim, ...] = ()
    """The facts of the reference answer, searched in the response for completeness; claim
    ids are unique (they key the ``claims`` rows)."""

    @field_validator("claims")
    @classmethod
    def _unique_claim_ids(cls, claims: tuple[ExpectedClaim, ...]) -> tuple[ExpectedClaim, ...]:
        seen: set[str] = set()
        for claim in claims:
            if claim.id in seen:
                raise ValueError(f"duplicate claim id {claim.id!r}")
            seen.add(claim.id)
        return claims


class GroundTruthChunk(Frozen):
    """A passage of a source page that is known to be true."""

    chunk_id: str = Field(min_length=1)
    """Identifier of the passage, unique within the test case (for example ``p1#0``)."""
    page_url: str = ""
    """URL of the page the passage comes from."""
    text: str = Field(min_length=1)
    """The passage text."""


class TestCase(Frozen):
    """One case of a test set, in the native JSONL format (one object per line)."""

    __test__ = False  # not a pytest test class, despite the name

    id: str = Field(min_length=1)
    """Identifier of the case, unique within the test set; becomes ``sample_id``. No
    control characters: ids are printed in terminals and logs, where they could move the
    cursor or forge lines."""
    domain: str = ""
    """The website domain the question is about (``acme.com``); used for attribution."""
    query: str = Field(min_length=1)
    """The question put to the AI."""
    response: str | None = None
    """The recorded answer; optional when a target generates it."""
    ai_provider: str = ""
    """Who produced the recorded answer (``gpt-x``, ``claude``, ...)."""
    expected_answer: ExpectedAnswer = ExpectedAnswer()
    """The reference answer and its claims."""
    ground_truth: tuple[GroundTruthChunk, ...] = ()
    """Passages known to be true, with their page URLs."""
    context: tuple[str, ...] | None = None
    """Retrieved passages the answer was generated from; defaults to the ground-truth texts."""
    brand_names: tuple[str, ...] = ()
    """Brand and product names that count as attribution to the domain."""
    tags: tuple[str, ...] = ()
    """Free labels for filtering (``pricing``, ``support``)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else; kept with the case and available to templates."""

    @field_validator("id")
    @classmethod
    def _printable_id(cls, value: str) -> str:
        if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
            raise ValueError("must not contain control characters (newline, tab, escape, ...)")
        return value

    @property
    def effective_context(self) -> tuple[str, ...]:
        """The retrieved context, falling back to the ground-truth passages."""
        if self.context is not None:
            return self.context
        return tuple(chunk.text for chunk in self.ground_truth)


class TierThresholds(Frozen):
    """Lower bounds (0-100) of the score tiers; below ``fair`` is ``poor``."""

    excellent: float = 85.0
    """Scores at or above this are excellent."""
    good: float = 70.0
    """Scores at or above this (and below excellent) are good."""
    fair: float = 50.0
    """Scores at or above this (and below good) are fair."""

    @field_validator("fair")
    @classmethod
    def _ordered(cls, fair: float) -> float:
        if not 0.0 <= fair <= 100.0:
            raise ValueError("tier thresholds must lie in 0..100")
        return fair

    def tier(self, score: float) -> Tier:
        """The tier of a 0-100 score."""
        if score >= self.excellent:
            return "excellent"
        if score >= self.good:
            return "good"
        if score >= self.fair:
            return "fair"
        return "poor"


class AccuracyConfig(Frozen):
    """How accuracy compares the response with the expected answer."""

    chunking: Literal["none", "sentences", "paragraphs"] = "none"
    """Split the response before comparing: not at all, by sentence or by paragraph."""
    aggregation: Literal["max", "mean"] = "max"
    """How chunk similarities combine into one score."""


class CompletenessConfig(Frozen):
    """How expected claims are searched in the response."""

    similarity_threshold: float | None = None
    """Cosine at or above which a claim counts as found. ``None`` takes the embedder's
    calibrated default (0.75 for OpenAI-style embedders, as the spec says)."""
    require_all_required: bool = False
    """When true, a response missing any required claim is flagged as failing."""
    require_shared_word: bool = True
    """A span states a claim only if it also shares a content word with it (brand and domain
    names aside): sentences about one product embed close together, and cosine alone
    counted unrelated claims as found (demo data: precision 0.79 without, 0.94 with)."""
    derive_claims: bool = True
    """When a case has an expected answer text and no claims, cut the text into atomic
    claims (``claims_source = 'derived'``) so completeness is measured for every case."""
    check_contradictions: bool = True
    """Read the best span of a found claim with the contradiction rules (numbers, units,
    dates, negation, names, antonyms): a span that states something else makes the claim
    ``contradicted``, not found."""


class AttributionConfig(Frozen):
    """Weights of the attribution score."""

    url_weight: float = 100.0
    """Points for citing a URL of the domain (full or partial path)."""
    domain_weight: float = 75.0
    """Points for naming the domain (with or without www., any case)."""
    brand_weight: float = 50.0
    """Points for naming a brand of the domain."""
    multi_mention_bonus: float = 10.0
    """Points added for each mention after the first."""
    max_score: float = 100.0
    """Cap of the attribution score."""


class AnalyzerConfig(Frozen):
    """Settings of the response analyzer, stored with every run (spec defaults)."""

    accuracy: AccuracyConfig = AccuracyConfig()
    """Accuracy settings."""
    completeness: CompletenessConfig = CompletenessConfig()
    """Completeness settings."""
    attribution: AttributionConfig = AttributionConfig()
    """Attribution settings."""
    tiers: TierThresholds = TierThresholds()
    """Tier thresholds applied to every 0-100 metric."""
    max_response_chars: int = 20_000
    """Longer responses are scored in chunks and flagged ``response_truncated``."""


class RagWeights(Frozen):
    """Weights of the RAG overall score (white paper defaults): finite and at least 0 (a
    negative weight left every overall score null without a word)."""

    correctness: float = Field(default=0.4, ge=0.0, allow_inf_nan=False)
    """Weight of correctness."""
    faithfulness: float = Field(default=0.2, ge=0.0, allow_inf_nan=False)
    """Weight of faithfulness."""
    precision: float = Field(default=0.2, ge=0.0, allow_inf_nan=False)
    """Weight of context precision."""
    recall: float = Field(default=0.2, ge=0.0, allow_inf_nan=False)
    """Weight of context recall."""
    relevance: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    """Weight of answer relevance."""


class TargetOptions(Frozen):
    """How the run's target (and every candidate's) is called."""

    timeout_s: float = Field(default=60.0, gt=0.0, le=3600.0)
    """Time limit of one request to the target, in seconds."""
    backoff_s: float = Field(default=0.5, ge=0.0, le=60.0)
    """First wait before a retry; doubled on every retry, with jitter."""
    prompt: str = "v1"
    """System prompt of the ``openai`` target: a packaged version (``v1``) or a file path."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature of the ``openai`` target (a candidate's own wins)."""
    include_context: bool = False
    """Send the case's context passages to the ``openai`` target with the question."""
    price_in: float | None = Field(default=None, ge=0.0)
    """US dollars per million input tokens; None takes the model's known price."""
    price_out: float | None = Field(default=None, ge=0.0)
    """US dollars per million output tokens; None takes the model's known price."""


class HttpEndpointOptions(Frozen):
    """How the ``http:URL`` target builds its request and reads the answer."""

    body: str = '{"query": "{{query}}"}'
    """JSON body template; ``{{query}}``, ``{{id}}``, ``{{metadata.x}}``, ``{{env.NAME}}``."""
    answer_path: str | None = None
    """Where the answer is in the response JSON (``$.data.answer``); None tries usual keys."""
    contexts_path: str | None = None
    """Where the retrieved passages are in the response JSON, if anywhere."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Request headers; values may use ``{{env.NAME}}`` so secrets stay in the environment."""


ModelPrice = tuple[float, float]
"""(input, output) US dollars per million tokens."""

LEGACY_OPTION_PATHS: dict[str, tuple[str, ...]] = {
    "target_timeout_s": ("target_options", "timeout_s"),
    "target_backoff_s": ("target_options", "backoff_s"),
    "target_prompt": ("target_options", "prompt"),
    "target_temperature": ("target_options", "temperature"),
    "target_include_context": ("target_options", "include_context"),
    "target_price_in": ("target_options", "price_in"),
    "target_price_out": ("target_options", "price_out"),
    "http_body": ("http", "body"),
    "http_answer_path": ("http", "answer_path"),
    "http_contexts_path": ("http", "contexts_path"),
    "http_headers": ("http", "headers"),
    "candidates": ("candidates",),
    "graders": ("graders",),
    "project": ("project",),
    "project_digest": ("project_digest",),
    "prices": ("prices",),
    "cancel_grace_s": ("cancel_grace_s",),
}
"""The flat ``--option`` names (and keys of the ``extra`` dict of run configs stored before
the options were typed) and the ``RunConfig`` field each one sets."""


class OptionError(InputError):
    """An ``--option`` (or config key) that names no setting, or a value it cannot take."""


def nest_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Flat option names (``target_timeout_s``, as given to ``--option``) or dotted paths
    (``target_options.timeout_s``) as the nested ``RunConfig`` fields they set.

    Raises OptionError naming an unknown key and the known ones, so a typo is refused
    instead of stored.
    """
    nested: dict[str, Any] = {}
    for key, value in options.items():
        path = LEGACY_OPTION_PATHS.get(key) or tuple(key.split("."))
        if not _is_field_path(path):
            known = ", ".join(sorted(LEGACY_OPTION_PATHS))
            raise OptionError(f"--option {key}: unknown option; known options: {known}")
        section = nested
        for part in path[:-1]:
            section = section.setdefault(part, {})
        section[path[-1]] = value
    return nested


def _is_field_path(path: tuple[str, ...]) -> bool:
    model: Any = RunConfig
    for part in path:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return False
        field = model.model_fields.get(part)
        if field is None or part in _NOT_OPTIONS:
            return False
        model = field.annotation
    return True


_NOT_OPTIONS = frozenset({"name", "test_set"})
"""Fields that have flags of their own and no ``--option``."""


def _ids(value: Any) -> Any:
    """``"a, b"`` -> ``("a", "b")``; lists kept; duplicates and blanks dropped."""
    items = value.split(",") if isinstance(value, str) else value
    if isinstance(items, list | tuple) and all(isinstance(i, str) for i in items):
        return tuple(dict.fromkeys(i.strip() for i in items if i.strip()))
    return value


class UntilCi(Frozen):
    """``--until-ci METRIC=WIDTH``: stop iterating once the metric's mean is known this well."""

    metric: str = Field(min_length=1)
    """A numeric ``results`` column (``accuracy``, ``overall``, ``passed`` as 0/1, ...)."""
    width: float = Field(gt=0.0)
    """Widest acceptable 95% interval of the metric's mean, in the metric's own units."""

    @field_validator("metric")
    @classmethod
    def _numeric_column(cls, metric: str) -> str:
        numeric = [
            name
            for name, info in ResultRecord.model_fields.items()
            if name != "iteration"
            and info.annotation in (float | None, bool | None, int | None, float, int)
        ]
        if metric not in numeric:
            raise ValueError(f"{metric!r} is not a numeric results column ({', '.join(numeric)})")
        return metric

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        """``"accuracy=2.0"`` (the flag's form) as well as a mapping."""
        if isinstance(data, str):
            metric, sep, width = data.partition("=")
            if not sep:
                raise ValueError("expected METRIC=WIDTH, for example accuracy=2.0")
            return {"metric": metric.strip(), "width": width.strip()}
        return data


class RunConfig(Frozen):
    """Everything that decides what a run computes; stored as JSON in ``runs.config``."""

    name: str = Field(min_length=1)
    """Human name of the run."""
    test_set: str
    """Path of the test set as given."""
    iterations: int = Field(default=1, ge=1, le=1000)
    """How many times every sample is evaluated."""
    judge: str = "local"
    """Judge spec: ``local``, ``openai:MODEL``, ``anthropic:MODEL`` or ``ollama:MODEL``."""
    embedder: str = "local"
    """Embedder spec: ``local`` or ``openai:MODEL``."""
    target: str = "recorded"
    """Where responses come from: ``recorded``, ``openai:MODEL`` or ``http:URL``."""
    concurrency: int = Field(default=5, ge=1, le=256)
    """Samples evaluated at once."""
    retries: int = Field(default=2, ge=0, le=10)
    """Retries of a failing call (target, judge, embedder) before the sample is an error row."""
    max_failed_fraction: float = Field(default=0.0, ge=0.0, le=1.0)
    """Fraction of error rows above which the run exits with code 1."""
    analyzer: AnalyzerConfig = AnalyzerConfig()
    """Response analyzer settings."""
    rag_weights: RagWeights = RagWeights()
    """Weights of the RAG overall score."""
    target_options: TargetOptions = TargetOptions()
    """How the target and candidate targets are called."""
    http: HttpEndpointOptions = HttpEndpointOptions()
    """Request and answer layout of the ``http:URL`` target."""
    candidates: tuple[str, ...] | None = None
    """Candidate ids to answer every case (``--candidates``); None answers with the target."""
    graders: tuple[str, ...] | None = None
    """Grader ids (``--graders``); None takes the candidates' recommendations, else all."""
    project: str | None = None
    """Folder holding ``candidates/`` and ``graders/`` (absolute once the run starts)."""
    project_digest: str | None = None
    """sha256 of the project's candidate and grader files when the run started: a resume
    with changed files is refused."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """Judge prices by model name (or prefix), overriding the packaged table."""
    cancel_grace_s: float = Field(default=30.0, ge=0.0, le=3600.0)
    """After Ctrl-C, how long samples in flight may finish before they are abandoned."""
    until_ci: UntilCi | None = None
    """Stop iterating once every lane's 95% interval of ``metric`` (over its iteration
    means) is at most ``width`` wide; ``iterations`` is the most it runs."""
    cascade: bool = False
    """With an LLM judge: the local judge scores every sample first and the LLM judge
    only those it cannot decide clearly (``results.scored_by`` says which)."""
    column_map: dict[str, str] = Field(default_factory=dict)
    """Test-set columns renamed to native fields before the format is detected
    (``--map question_text=query`` or a ``map:`` section of ``--config``); kept with the
    run so a resumed run reads the file the same way."""

    @model_validator(mode="before")
    @classmethod
    def _move_legacy_extra(cls, data: Any) -> Any:
        """Configs stored before the options were typed kept them in ``extra``: move the
        known keys to their fields (so old runs resume) and drop the rest, which nothing
        ever read."""
        if not isinstance(data, dict) or "extra" not in data:
            return data
        data = dict(data)
        legacy = data.pop("extra") or {}
        for key, value in legacy.items() if isinstance(legacy, dict) else ():
            path = LEGACY_OPTION_PATHS.get(key)
            if path is None:
                continue
            if len(path) == 1:
                data.setdefault(path[0], value)
            else:
                section = dict(data.get(path[0]) or {})
                section.setdefault(path[1], value)
                data[path[0]] = section
        return data

    @field_validator("candidates", "graders", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        return None if value is None else _ids(value)

    @field_validator("candidates", "graders")
    @classmethod
    def _some_ids(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and not value:
            raise ValueError("names no id")
        return value

    @property
    def uses_graders(self) -> bool:
        """Whether the run answers with candidates or grades outputs (``--candidates`` or
        ``--graders``)."""
        return self.candidates is not None or self.graders is not None

    def computing(self) -> dict[str, Any]:
        """The settings that decide what the run computes: everything but its pace
        (``concurrency``, ``retries``, ``max_failed_fraction``, ``cancel_grace_s``), which
        may change when a run resumes. Two runs with equal ``computing()`` are one run."""
        return self.model_dump(
            mode="json",
            exclude={"concurrency", "retries", "max_failed_fraction", "cancel_grace_s"},
        )


# --------------------------------------------------------------------------- conversations


TurnRole = Literal["user", "assistant"]


class ConversationTurn(Frozen):
    """One turn of a multi-turn conversation (the eval-harness write-up's CSV row)."""

    turn: int = Field(ge=1)
    """Position in the conversation, from 1."""
    role: TurnRole
    """``user`` (a message to send) or ``assistant`` (a reply to generate and grade)."""
    content: str = ""
    """The user's message; for an assistant turn, a recorded reply (empty: generate one)."""
    expected: str = ""
    """What the assistant should do or say at this turn (its behavioural expectation)."""


class Conversation(Frozen):
    """A multi-turn test case: turns in order, graded turn by turn and as a whole."""

    id: str = Field(min_length=1)
    """Conversation id (``conversation_id``)."""
    scenario: str = ""
    """What the conversation is about, for people."""
    chatbot_role: str = ""
    """The role the assistant must keep (role adherence)."""
    turns: tuple[ConversationTurn, ...]
    """Turns ordered by ``turn``; at least one assistant turn, every user turn has text."""


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
    config: str
    """The ``RunConfig`` as JSON (no secrets: keys are read from the environment only)."""
    judge: str
    """Judge that scored the run, with its model (``local`` when deterministic)."""
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
    """Accuracy 0-100: cosine of response and expected answer; null on error."""
    accuracy_tier: Tier | None = None
    """Tier of accuracy."""
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
    """Rubric pass: both judge scores at least 4."""
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
    """Cost of the sample: target plus judges, in US dollars."""
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
    """Contradiction rule behind a contradicted claim (number, unit, date, negation, ...)."""
    claims_source: ClaimsSource | None = None
    """given (written in the test set) or derived (cut from the reference answer)."""


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
    """Share of samples with judge faithfulness >= 4."""
    completeness_pass_rate: float | None = None
    """Share of samples with judge completeness >= 4."""
    pass_rate: float | None = None
    """Share of samples passing both."""
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
    error: str | None = None
    """Why the pair could not be judged; null when it was."""
    compared_at: datetime
    """When the comparison ran (UTC, naive)."""


LAKE_TABLES: dict[str, type[Frozen]] = {
    "runs": RunRecord,
    "results": ResultRecord,
    "claims": ClaimRecord,
    "highlights": HighlightRecord,
    "attributions": AttributionRecord,
    "verdicts": VerdictRecord,
    "iteration_metrics": IterationMetricsRecord,
    "grader_scores": GraderScoreRecord,
    "sample_scores": SampleScoreRecord,
    "pairwise": PairwiseRecord,
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
