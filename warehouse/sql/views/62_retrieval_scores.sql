-- Retrieval metrics per sample: the rows of scorer 'retrieval' in sample_scores that are
-- metrics (mrr, hit@k, ndcg@k, precision@k, recall@k; the 'rank:<passage>' rows say where
-- each ground-truth passage came and are left out), with their result row's domain,
-- provider and tags. value is the 0-1 ratio, score its 0-100 form (x 100), as graders'.
-- A case without retrieval data has no row (not zeros), so means cover only cases with it.
CREATE OR REPLACE VIEW retrieval_scores AS
SELECT
    s.run_id, s.iteration, s.sample_id, s.candidate, r.domain, r.ai_provider, r.tags,
    s.metric, s.value, s.value * 100 AS score
FROM sample_scores AS s
JOIN results AS r USING (run_id, iteration, sample_id, candidate)
WHERE s.scorer = 'retrieval' AND NOT starts_with(s.metric, 'rank:');
