"""Run settings: ``RunConfig`` and its typed parts, stored as JSON in ``runs.config``."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from engine.models.base import (
    Frozen,
)
from engine.models.records import ResultRecord
from engine.models.scoring_config import (
    AccuracyConfig as AccuracyConfig,
    AnalyzerConfig as AnalyzerConfig,
    AttributionConfig as AttributionConfig,
    CompletenessConfig as CompletenessConfig,
    RagWeights as RagWeights,
    TierThresholds as TierThresholds,
)


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

    @field_validator("body", mode="before")
    @classmethod
    def _body_as_text(cls, body: Any) -> Any:
        """A body given as a mapping or list (a YAML config's ``body: {question:
        "{{query}}"}``) is the JSON text of it: the template is JSON either way."""
        if isinstance(body, dict | list):
            return json.dumps(body, ensure_ascii=False)
        return body


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
    "workers": ("workers",),
    "force_workers": ("force_workers",),
}
"""The flat ``--option`` names (and keys of the ``extra`` dict of run configs stored before
the options were typed) and the ``RunConfig`` field each one sets."""


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


MAX_SCORED_CHARS = 20_000
"""Default of ``RunConfig.max_scored_chars``: about 3,000 words, longer than nearly any answer
people read; the local judge scores it in seconds, where a 1 MB answer took minutes."""


RETRIEVAL_KS: tuple[int, ...] = (1, 3, 5, 10)
"""Default of ``RunConfig.retrieval_k``: the cut-offs RAG teams usually read."""

RETRIEVAL_MATCH_THRESHOLD = 0.85
"""Default of ``RunConfig.retrieval_match_threshold`` (see its docstring)."""


PACE_FIELDS: tuple[str, ...] = (
    "concurrency",
    "workers",
    "force_workers",
    "retries",
    "max_failed_fraction",
    "cancel_grace_s",
    "executor",
    "ray_address",
)
"""``RunConfig`` fields that decide how fast and where a run goes, not what it computes: a
run started in one process may be resumed on Ray and the other way round."""


MAX_WORKERS = 64
"""Most worker processes a run may ask for, forced or not: each loads its own copy of the
model (hundreds of MB), so beyond this a typo exhausts memory before it scores anything."""

REPEAT_TEMPERATURE = 1.0
"""Judge temperature of a run that asks its judge again when it sets none: at 0 a repeat
mostly replays the most likely reply, and the spread it shows is not the judge's."""


class RunConfig(Frozen):
    """Everything that decides what a run computes; stored as JSON in ``runs.config``."""

    name: str = Field(min_length=1)
    """Human name of the run."""
    series: str | None = Field(default=None, min_length=1, max_length=200)
    """The series the run belongs to, whose previous completed run is its baseline
    everywhere; None: the name without a trailing date or week (view ``run_series``)."""
    test_set: str
    """Path of the test set (JSONL, JSON or CSV), as given."""
    iterations: int = Field(default=1, ge=1, le=1000)
    """How many times every sample is evaluated."""
    judge: str = "local"
    """Judge spec: ``local``, ``openai:MODEL``, ``anthropic:MODEL`` or ``ollama:MODEL``."""
    jury: tuple[str, ...] = ()
    """Further judges that score every answer beside ``judge`` (``--judge`` given more than
    once): the answer's scores are the judges' mean, its pass/fail their majority (a tie
    is not a pass), and each judge's own scores are kept in ``judge_asks``."""
    judge_repeats: int = Field(default=1, ge=1, le=50)
    """Times each LLM judge is asked about each answer in each iteration, every ask a fresh
    call (never a cache replay): scores are the asks' mean, pass/fail their majority, and
    an answer whose pass/fail flips across asks is flagged ``judge_flaky``. The local judge
    is deterministic and is asked once."""
    judge_temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sampling temperature sent to LLM judges. Unset: 0 when each answer is judged once,
    else 1 (``REPEAT_TEMPERATURE``, the providers' own default), so that asking again
    measures how the judge varies rather than replaying its most likely reply."""
    reanalysis_of: str | None = None
    """The run whose stored answers this run re-scores against new ground truth
    (``evalhouse reanalyze``); None for a run that got its own answers."""
    ground_truth_file: str | None = None
    """The new ground truth a re-analysis read (path as given)."""
    ground_truth_hash: str | None = None
    """sha256 of that file: the version of the truth the answers were scored against."""
    verifier: str = "crossencoder"
    """Who decides what an answer states: ``crossencoder`` (the shipped claim verifier; it
    decides the analyzer's claims and highlights and the local judge's verdicts), ``rules``
    (cosine thresholds, contradiction rules and the judge's learned combiner), or a grounding
    model over HTTP, ``openai:MODEL`` or ``ollama:MODEL`` (for example
    ``ollama:bespoke-minicheck``), deciding the local judge's verdicts on the evidence the
    embedder finds."""
    embedder: str = "local"
    """Embedder spec: ``local`` or ``openai:MODEL``."""
    target: str = "recorded"
    """Where responses come from: ``recorded``, ``openai:MODEL`` or ``http:URL``."""
    max_scored_chars: int = Field(default=MAX_SCORED_CHARS, ge=1_000, le=10_000_000)
    """Characters of an answer that are scored; a longer answer is stored whole, scored up
    to a sentence end before this many characters and flagged ``truncated``."""
    concurrency: int = Field(default=5, ge=1, le=256)
    """Samples evaluated at once (with ``workers`` and nothing remote to call, at least
    enough to fill a batch in every worker)."""
    workers: int | None = Field(default=None, ge=1, le=MAX_WORKERS)
    """Processes that run the local CPU-bound scoring (analyzer, local judge), each with
    its own copy of the model; None: one per usable core; 1 scores in this process. At
    most one per 64 samples and per usable core are started, unless ``force_workers``."""
    force_workers: bool = False
    """Start exactly ``workers`` processes, even more than the samples or the usable
    cores can use (for measuring the pool itself)."""
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
    """Candidate ids (files ``candidates/<family>/<name>.md`` of the project) to answer every
    case; None answers with the target."""
    graders: tuple[str, ...] | None = None
    """Grader ids (files ``graders/*.yaml`` of the project, or built-ins such as
    ``accuracy``); None takes the candidates' recommendations, else all."""
    project: str | None = None
    """Folder holding ``candidates/`` and ``graders/`` (default: the current directory;
    stored absolute once the run starts)."""
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
    executor: Literal["local", "ray"] = "local"
    """Where samples are scored: ``local`` (this process) or ``ray`` (shards of samples as
    Ray tasks that write their own lake parts; ``pip install 'evalhouse[scale]'``)."""
    ray_address: str | None = None
    """Address of a running Ray cluster (``--ray ADDRESS``); None starts a local Ray on
    127.0.0.1 for the run."""
    conversation_window: int = Field(default=5, ge=1, le=100)
    """Conversation test sets: turns of history the judge sees with each assistant reply
    (the sliding window; ``--option conversation_window=3``)."""
    judge_calls: Literal["batched", "per_prompt"] = "batched"
    """With an LLM judge: ``batched`` verifies all of a sample's claims in one call whose
    reply also names the chunks stating each claim (RAG precision without calls of its
    own); ``per_prompt`` keeps one call per claim and one per context chunk
    (``--option judge_calls=per_prompt``)."""
    judge_mode: Literal["live", "batch"] = "live"
    """``batch`` (``openai:`` judges): judge prompts go to the OpenAI Batch API at half the
    price, answered within its 24 h window; resumable, and what a batch fails is asked live."""
    retrieval_k: tuple[int, ...] = RETRIEVAL_KS
    """Cut-offs k of the retrieval metrics Hit@k, NDCG@k, precision@k and recall@k
    (``--retrieval-k 1,3,5,10``); MRR reads the whole ranking."""
    retrieval_match_threshold: float = Field(default=RETRIEVAL_MATCH_THRESHOLD, gt=0.0, le=1.0)
    """Cosine at or above which a retrieved passage counts as a ground-truth passage when
    the case has no ids to match (texts that are equal once case and spaces are normalised
    match first, without the embedder). A re-cut copy of a passage stays above 0.85 with
    the local embedder, another passage of the same page mostly below it."""
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

    @field_validator("retrieval_k", mode="before")
    @classmethod
    def _k_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        if isinstance(value, int):
            return (value,)
        return value

    @field_validator("retrieval_k")
    @classmethod
    def _ks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or any(k < 1 or k > 1000 for k in value):
            raise ValueError("needs cut-offs between 1 and 1000, e.g. 1,3,5,10")
        return tuple(sorted(set(value)))

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

    @model_validator(mode="after")
    def _batch_mode_fits(self) -> RunConfig:
        if self.judge_mode == "batch":
            if not self.judge.strip().startswith("openai:"):
                raise ValueError("judge_mode batch needs an openai: judge (the OpenAI Batch API)")
            if self.executor != "local":
                raise ValueError("judge_mode batch runs in this process: drop --ray")
        return self

    @field_validator("jury", mode="before")
    @classmethod
    def _jury_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("jury")
    @classmethod
    def _each_judge_once(cls, jury: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        judges = [str(info.data.get("judge", "")).strip(), *(j.strip() for j in jury)]
        if len(set(judges)) < len(judges):
            raise ValueError(f"a jury names each judge once, not {', '.join(judges)}")
        return jury

    @model_validator(mode="after")
    def _jury_fits(self) -> RunConfig:
        if self.jury and self.judge_mode == "batch":
            raise ValueError("judge_mode batch takes one judge, not a jury")
        return self

    @property
    def judges(self) -> tuple[str, ...]:
        """Every judge that scores the answers: ``judge``, then the ``jury``."""
        return (self.judge.strip(), *(j.strip() for j in self.jury))

    @property
    def judge_asked_again(self) -> bool:
        """Whether an LLM judge is asked about an answer more than once (iterations or
        repeats), which measures its reliability."""
        return self.iterations > 1 or self.judge_repeats > 1

    @property
    def effective_judge_temperature(self) -> float:
        """The temperature LLM judges are asked at (``judge_temperature`` resolved)."""
        if self.judge_temperature is not None:
            return self.judge_temperature
        return REPEAT_TEMPERATURE if self.judge_asked_again else 0.0

    @property
    def uses_graders(self) -> bool:
        """Whether the run answers with candidates or grades outputs (``--candidates`` or
        ``--graders``)."""
        return self.candidates is not None or self.graders is not None

    def computing(self) -> dict[str, Any]:
        """The settings that decide what the run computes: everything but its pace
        (``concurrency``, ``workers``, ``retries``, ``max_failed_fraction``,
        ``cancel_grace_s``, ``executor``, ``ray_address``), which may change when a run
        resumes. Two runs with equal ``computing()`` are one run."""
        return self.model_dump(mode="json", exclude=set(PACE_FIELDS))
