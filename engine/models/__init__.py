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

from engine.models.base import (
    ANALYZER_METRICS,
    AttributionType,
    ClaimsSource,
    ClaimStatus,
    Frozen,
    Importance,
    RunStatus,
    Tier,
    Verdict,
)
from engine.models.config import (
    LEGACY_OPTION_PATHS,
    AccuracyConfig,
    AnalyzerConfig,
    AttributionConfig,
    CompletenessConfig,
    HttpEndpointOptions,
    ModelPrice,
    RagWeights,
    RunConfig,
    TargetOptions,
    TierThresholds,
    UntilCi,
)
from engine.models.conversation_records import ConversationScoreRecord, TurnRecord
from engine.models.drift_records import DriftAnchorRecord, JudgeDriftRecord
from engine.models.inputs import (
    Conversation,
    ConversationTurn,
    ExpectedAnswer,
    ExpectedClaim,
    GroundTruthChunk,
    TestCase,
    TurnRole,
)
from engine.models.judge_records import JudgeAskRecord
from engine.models.lineage_records import CandidateLineageRecord
from engine.models.options import OptionError, nest_options, option_bounds, option_value
from engine.models.records import (
    LAKE_TABLES,
    AlertRecord,
    AttributionRecord,
    CaseRecord,
    ClaimRecord,
    GraderScoreRecord,
    HighlightRecord,
    IterationMetricsRecord,
    PairWinner,
    PairwiseRecord,
    ResultRecord,
    RunRecord,
    SampleKey,
    SampleScoreRecord,
    VerdictRecord,
)
from engine.models.reviews import (
    REVIEW_LABELS,
    ReviewItem,
    ReviewLabel,
    ReviewRecord,
    RunLabelRecord,
)
from engine.models.testset_records import TestSetCaseRecord
from engine.models.tools import ExpectedTool, ToolCall, TrajectoryStep

__all__ = [
    "ANALYZER_METRICS",
    "LAKE_TABLES",
    "LEGACY_OPTION_PATHS",
    "REVIEW_LABELS",
    "AccuracyConfig",
    "AlertRecord",
    "AnalyzerConfig",
    "AttributionConfig",
    "AttributionRecord",
    "AttributionType",
    "CandidateLineageRecord",
    "CaseRecord",
    "ClaimRecord",
    "ClaimStatus",
    "ClaimsSource",
    "CompletenessConfig",
    "Conversation",
    "ConversationScoreRecord",
    "ConversationTurn",
    "DriftAnchorRecord",
    "ExpectedAnswer",
    "ExpectedClaim",
    "ExpectedTool",
    "Frozen",
    "GraderScoreRecord",
    "GroundTruthChunk",
    "HighlightRecord",
    "HttpEndpointOptions",
    "Importance",
    "IterationMetricsRecord",
    "JudgeAskRecord",
    "JudgeDriftRecord",
    "ModelPrice",
    "OptionError",
    "PairWinner",
    "PairwiseRecord",
    "RagWeights",
    "ResultRecord",
    "ReviewItem",
    "ReviewLabel",
    "ReviewRecord",
    "RunConfig",
    "RunLabelRecord",
    "RunRecord",
    "RunStatus",
    "SampleKey",
    "SampleScoreRecord",
    "TargetOptions",
    "TestCase",
    "TestSetCaseRecord",
    "Tier",
    "TierThresholds",
    "ToolCall",
    "TrajectoryStep",
    "TurnRecord",
    "TurnRole",
    "UntilCi",
    "Verdict",
    "VerdictRecord",
    "nest_options",
    "option_bounds",
    "option_value",
]
