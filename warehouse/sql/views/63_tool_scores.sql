-- Tool-call metrics of an agent's trajectory per sample: the rows of scorer 'tools' in
-- sample_scores that are metrics (engine.models.metrics.TOOL_METRICS: tool_precision,
-- tool_recall, tool_f1, argument_correctness, order_exact, order_subsequence,
-- redundant_calls, task_completion; the 'call:<n>' rows say how each expected call was met
-- and are left out), with their result row's domain, provider and tags. value is on the
-- metric's scale (0-1, redundant_calls a count); score is the 0-100 form of the 0-1 ones
-- (null for the count). A case without expected_tools has no row, so means cover only
-- agent cases.
CREATE OR REPLACE VIEW tool_scores AS
SELECT
    s.run_id, s.iteration, s.sample_id, s.candidate, r.domain, r.ai_provider, r.tags,
    s.metric, s.value,
    CASE WHEN s.metric <> 'redundant_calls' THEN s.value * 100 END AS score,
    s.reason
FROM sample_scores AS s
JOIN results AS r USING (run_id, iteration, sample_id, candidate)
WHERE s.scorer = 'tools' AND NOT starts_with(s.metric, 'call:');
