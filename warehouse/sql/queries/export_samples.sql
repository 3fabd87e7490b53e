-- One row per sample of a run (first iteration, one candidate) with its scores: what
-- `evalhouse export` writes in a peer's format. $candidate '' is the recorded/target lane.
SELECT
    sample_id, domain, ai_provider, query, response, tags,
    accuracy, completeness, attribution, coverage_percent,
    judge_faithfulness, judge_completeness, passed, claim_faithfulness,
    rag_correctness, rag_faithfulness, rag_precision, rag_recall, rag_relevance, rag_overall,
    overall, error
FROM results
WHERE run_id = $run_id
  AND candidate = $candidate
  AND iteration = (SELECT min(iteration) FROM results WHERE run_id = $run_id AND candidate = $candidate)
ORDER BY sample_id
