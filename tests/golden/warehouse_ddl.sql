CREATE TABLE IF NOT EXISTS "runs" (
    "run_id" VARCHAR NOT NULL,
    "name" VARCHAR NOT NULL,
    "started_at" TIMESTAMP NOT NULL,
    "finished_at" TIMESTAMP,
    "status" VARCHAR NOT NULL,
    "iterations" BIGINT NOT NULL,
    "test_set" VARCHAR NOT NULL,
    "test_set_hash" VARCHAR,
    "test_set_name" VARCHAR,
    "test_set_cases_hash" VARCHAR,
    "series" VARCHAR,
    "config" VARCHAR NOT NULL,
    "judge" VARCHAR NOT NULL,
    "judge_temperature" DOUBLE,
    "embedder" VARCHAR NOT NULL,
    "claim_threshold" DOUBLE,
    "judge_prompt_version" VARCHAR,
    "version" VARCHAR NOT NULL,
    "git_commit" VARCHAR,
    "host" VARCHAR,
    "samples" BIGINT,
    "updated_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "cases" (
    "run_id" VARCHAR NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "sample_hash" VARCHAR NOT NULL,
    "domain" VARCHAR NOT NULL,
    "query" VARCHAR NOT NULL,
    "reference" VARCHAR,
    "case_json" VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS "results" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "domain" VARCHAR NOT NULL,
    "ai_provider" VARCHAR NOT NULL,
    "query" VARCHAR NOT NULL,
    "response" VARCHAR NOT NULL,
    "tags" VARCHAR[],
    "accuracy" DOUBLE,
    "accuracy_tier" VARCHAR,
    "accuracy_similarity" DOUBLE,
    "completeness" DOUBLE,
    "completeness_tier" VARCHAR,
    "attribution" DOUBLE,
    "attribution_tier" VARCHAR,
    "coverage_percent" DOUBLE,
    "judge_faithfulness" DOUBLE,
    "judge_completeness" DOUBLE,
    "judge_reasoning" VARCHAR,
    "faithfulness_reasoning" VARCHAR,
    "completeness_reasoning" VARCHAR,
    "passed" BOOLEAN,
    "claim_faithfulness" DOUBLE,
    "rag_correctness" DOUBLE,
    "rag_faithfulness" DOUBLE,
    "rag_precision" DOUBLE,
    "rag_recall" DOUBLE,
    "rag_relevance" DOUBLE,
    "rag_overall" DOUBLE,
    "overall" DOUBLE,
    "latency_ms" DOUBLE,
    "input_tokens" BIGINT,
    "output_tokens" BIGINT,
    "judge_input_tokens" BIGINT,
    "judge_output_tokens" BIGINT,
    "scoring_ms" DOUBLE,
    "cost_usd" DOUBLE,
    "error" VARCHAR,
    "flags" VARCHAR[],
    "abstained" BOOLEAN,
    "sample_hash" VARCHAR,
    "reanalysis_of" VARCHAR,
    "scored_at" TIMESTAMP NOT NULL,
    "scored_by" VARCHAR
);

CREATE TABLE IF NOT EXISTS "claims" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "claim_id" VARCHAR NOT NULL,
    "claim_text" VARCHAR NOT NULL,
    "importance" VARCHAR NOT NULL,
    "found" BOOLEAN NOT NULL,
    "evidence" VARCHAR,
    "similarity" DOUBLE NOT NULL,
    "response_start" BIGINT,
    "response_end" BIGINT,
    "status" VARCHAR,
    "rule" VARCHAR,
    "claims_source" VARCHAR,
    "confidence" DOUBLE
);

CREATE TABLE IF NOT EXISTS "highlights" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "response_start" BIGINT NOT NULL,
    "response_end" BIGINT NOT NULL,
    "chunk_id" VARCHAR,
    "page_url" VARCHAR,
    "matched_text" VARCHAR,
    "similarity" DOUBLE NOT NULL
);

CREATE TABLE IF NOT EXISTS "attributions" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "type" VARCHAR NOT NULL,
    "matched_text" VARCHAR NOT NULL,
    "response_start" BIGINT NOT NULL,
    "response_end" BIGINT NOT NULL,
    "context" VARCHAR
);

CREATE TABLE IF NOT EXISTS "verdicts" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "claim_index" BIGINT,
    "claim_text" VARCHAR NOT NULL,
    "verdict" VARCHAR NOT NULL,
    "evidence" VARCHAR,
    "similarity" DOUBLE,
    "rule" VARCHAR,
    "response_start" BIGINT,
    "response_end" BIGINT,
    "confidence" DOUBLE
);

CREATE TABLE IF NOT EXISTS "judge_asks" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "judge" VARCHAR NOT NULL,
    "ask" BIGINT NOT NULL,
    "metric" VARCHAR NOT NULL,
    "score_100" DOUBLE,
    "passed" BOOLEAN
);

CREATE TABLE IF NOT EXISTS "iteration_metrics" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "candidate" VARCHAR,
    "samples" BIGINT NOT NULL,
    "errors" BIGINT NOT NULL,
    "accuracy_mean" DOUBLE,
    "completeness_mean" DOUBLE,
    "attribution_mean" DOUBLE,
    "judge_faithfulness_mean" DOUBLE,
    "judge_completeness_mean" DOUBLE,
    "faithfulness_pass_rate" DOUBLE,
    "completeness_pass_rate" DOUBLE,
    "pass_rate" DOUBLE,
    "claim_faithfulness_mean" DOUBLE,
    "rag_overall_mean" DOUBLE,
    "input_tokens" BIGINT,
    "output_tokens" BIGINT,
    "cost_usd" DOUBLE,
    "low_faithfulness" VARCHAR,
    "finished_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "grader_scores" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "grader" VARCHAR NOT NULL,
    "score" DOUBLE,
    "passed" BOOLEAN,
    "reason" VARCHAR,
    "weight" DOUBLE
);

CREATE TABLE IF NOT EXISTS "sample_scores" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "scorer" VARCHAR NOT NULL,
    "metric" VARCHAR NOT NULL,
    "value" DOUBLE,
    "label" VARCHAR,
    "reason" VARCHAR
);

CREATE TABLE IF NOT EXISTS "pairwise" (
    "comparison_id" VARCHAR NOT NULL,
    "run_a" VARCHAR NOT NULL,
    "run_b" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "candidate_b" VARCHAR,
    "domain" VARCHAR,
    "winner" VARCHAR,
    "consistent" BOOLEAN,
    "a_first" VARCHAR,
    "b_first" VARCHAR,
    "score_a" DOUBLE,
    "score_b" DOUBLE,
    "reason" VARCHAR,
    "judge" VARCHAR NOT NULL,
    "input_tokens" BIGINT,
    "output_tokens" BIGINT,
    "cost_usd" DOUBLE,
    "error" VARCHAR,
    "compared_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "turns" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "turn" BIGINT NOT NULL,
    "role" VARCHAR NOT NULL,
    "content" VARCHAR NOT NULL,
    "expected" VARCHAR,
    "generated" BOOLEAN,
    "window_start" BIGINT,
    "expectation_score" DOUBLE,
    "expectation_passed" BOOLEAN,
    "relevant" BOOLEAN,
    "in_role" BOOLEAN,
    "attrition" BOOLEAN,
    "reason" VARCHAR,
    "latency_ms" DOUBLE,
    "input_tokens" BIGINT,
    "output_tokens" BIGINT,
    "cost_usd" DOUBLE
);

CREATE TABLE IF NOT EXISTS "conversation_scores" (
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "scenario" VARCHAR,
    "chatbot_role" VARCHAR,
    "turns" BIGINT NOT NULL,
    "assistant_turns" BIGINT NOT NULL,
    "window_size" BIGINT NOT NULL,
    "expectation_mean" DOUBLE,
    "expectation_pass_rate" DOUBLE,
    "relevancy" DOUBLE,
    "knowledge_retention" DOUBLE,
    "completeness" DOUBLE,
    "role_adherence" DOUBLE,
    "intents" VARCHAR,
    "reason" VARCHAR,
    "judge" VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS "run_labels" (
    "label_id" VARCHAR NOT NULL,
    "run_id" VARCHAR NOT NULL,
    "name" VARCHAR,
    "tags" VARCHAR[],
    "archived" BOOLEAN,
    "series" VARCHAR,
    "labelled_by" VARCHAR,
    "labelled_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "reviews" (
    "review_id" VARCHAR NOT NULL,
    "run_id" VARCHAR NOT NULL,
    "iteration" BIGINT NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "candidate" VARCHAR,
    "item" VARCHAR NOT NULL,
    "item_id" VARCHAR,
    "item_text" VARCHAR,
    "label" VARCHAR NOT NULL,
    "machine_label" VARCHAR,
    "comment" VARCHAR,
    "reviewer" VARCHAR NOT NULL,
    "reviewed_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "alerts" (
    "alert_id" VARCHAR NOT NULL,
    "run_id" VARCHAR NOT NULL,
    "series" VARCHAR NOT NULL,
    "rule" VARCHAR NOT NULL,
    "metric" VARCHAR NOT NULL,
    "domain" VARCHAR,
    "state" VARCHAR NOT NULL,
    "value" DOUBLE,
    "threshold" DOUBLE NOT NULL,
    "kind" VARCHAR,
    "message" VARCHAR NOT NULL,
    "notified" BOOLEAN,
    "error" VARCHAR,
    "evaluated_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "drift_anchors" (
    "run_id" VARCHAR NOT NULL,
    "series" VARCHAR NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "domain" VARCHAR NOT NULL,
    "frozen_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "judge_drift" (
    "check_id" VARCHAR NOT NULL,
    "run_id" VARCHAR,
    "baseline_run_id" VARCHAR,
    "series" VARCHAR NOT NULL,
    "anchor_run_id" VARCHAR NOT NULL,
    "metric" VARCHAR NOT NULL,
    "old_judge" VARCHAR NOT NULL,
    "new_judge" VARCHAR NOT NULL,
    "mean_shift" DOUBLE NOT NULL,
    "ci_low" DOUBLE,
    "ci_high" DOUBLE,
    "n" BIGINT NOT NULL,
    "checked_at" TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS "candidate_lineage" (
    "run_id" VARCHAR NOT NULL,
    "candidate" VARCHAR NOT NULL,
    "family" VARCHAR NOT NULL,
    "parent" VARCHAR,
    "edit" VARCHAR,
    "variant_label" VARCHAR,
    "name" VARCHAR,
    "prompt_sha256" VARCHAR
);

CREATE TABLE IF NOT EXISTS "testset_cases" (
    "run_id" VARCHAR NOT NULL,
    "test_set_name" VARCHAR NOT NULL,
    "cases_hash" VARCHAR NOT NULL,
    "sample_id" VARCHAR NOT NULL,
    "sample_hash" VARCHAR NOT NULL,
    "case_json" VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS "runs_log" (
    "run_id" VARCHAR NOT NULL,
    "name" VARCHAR NOT NULL,
    "started_at" TIMESTAMP NOT NULL,
    "finished_at" TIMESTAMP,
    "status" VARCHAR NOT NULL,
    "iterations" BIGINT NOT NULL,
    "test_set" VARCHAR NOT NULL,
    "test_set_hash" VARCHAR,
    "test_set_name" VARCHAR,
    "test_set_cases_hash" VARCHAR,
    "series" VARCHAR,
    "config" VARCHAR NOT NULL,
    "judge" VARCHAR NOT NULL,
    "judge_temperature" DOUBLE,
    "embedder" VARCHAR NOT NULL,
    "claim_threshold" DOUBLE,
    "judge_prompt_version" VARCHAR,
    "version" VARCHAR NOT NULL,
    "git_commit" VARCHAR,
    "host" VARCHAR,
    "samples" BIGINT,
    "updated_at" TIMESTAMP NOT NULL
);

-- Which lake parts are in the warehouse: ingest loads only paths not listed here.
CREATE TABLE IF NOT EXISTS ingested_files (
    path VARCHAR NOT NULL,          -- part path relative to the lake root
    table_name VARCHAR NOT NULL,    -- lake table the part belongs to
    run_id VARCHAR NOT NULL,
    iteration BIGINT NOT NULL,
    size_bytes BIGINT NOT NULL,
    status VARCHAR NOT NULL,        -- loaded | corrupt
    error VARCHAR,                  -- why a corrupt part was skipped
    ingested_at TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS schema_version (
    version BIGINT NOT NULL,        -- warehouse.schema.SCHEMA_VERSION
    ddl_sha256 VARCHAR NOT NULL,    -- fingerprint of the generated DDL and views
    created_at TIMESTAMP NOT NULL
);
