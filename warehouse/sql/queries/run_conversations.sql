-- The conversations of one run with their conversation-level scores (0-1), one row per
-- conversation, iteration and candidate.
SELECT sample_id AS conversation_id, iteration, candidate, scenario, turns, assistant_turns,
       expectation_mean, expectation_pass_rate, relevancy, knowledge_retention,
       completeness, role_adherence, judge
FROM conversation_scores
WHERE run_id = $run_id
ORDER BY sample_id, iteration, candidate;
