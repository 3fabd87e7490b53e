-- Every latest review (view review_latest) next to what evalhouse said about the same item,
-- one row per (review, metric): the material of judge agreement.
-- kind = 'label' (categorical; compare judge_label with human_label):
--   claim_status   the analyzer's found / missing / contradicted vs the reviewer's
--   claim_verdict  the judge's verdict as supported / not supported; the reviewer's label is
--                  the judge's when they agree, the other one when they disagree
--   rubric_pass    the rubric's pass / fail vs the reviewer (correct = pass; partly and
--                  incorrect = fail)
-- kind = 'score' (numeric; judge_score in its 0-100 form vs human_score: correct 100,
--   partly 50, incorrect 0): judge_faithfulness, judge_completeness, judge_overall,
--   claim_faithfulness, rag_overall, accuracy, completeness.
-- judge names who produced the machine side: runs.judge, or 'analyzer:<embedder>' for the
-- analyzer's claim status, accuracy and completeness.
CREATE OR REPLACE VIEW review_pairs AS
WITH rv AS (
    SELECT rv.*, r.judge AS run_judge, 'analyzer:' || r.embedder AS analyzer
    FROM review_latest AS rv
    JOIN runs AS r USING (run_id)
),
claim_pairs AS (
    SELECT rv.run_id, rv.iteration, rv.sample_id, rv.candidate, rv.item, rv.item_id,
           rv.reviewer, rv.reviewed_at, rv.review_id,
           rv.analyzer AS judge, 'claim_status' AS metric, 'label' AS kind,
           coalesce(c.status, CASE WHEN c.found THEN 'found' ELSE 'missing' END) AS judge_label,
           rv.label AS human_label,
           NULL::DOUBLE AS judge_score, NULL::DOUBLE AS human_score
    FROM rv
    JOIN claims AS c
      ON c.run_id = rv.run_id AND c.iteration = rv.iteration AND c.sample_id = rv.sample_id
     AND c.candidate = rv.candidate AND c.claim_id = rv.item_id
    WHERE rv.item = 'claim'
),
verdict_pairs AS (
    SELECT rv.run_id, rv.iteration, rv.sample_id, rv.candidate, rv.item, rv.item_id,
           rv.reviewer, rv.reviewed_at, rv.review_id,
           rv.run_judge AS judge, 'claim_verdict' AS metric, 'label' AS kind,
           CASE WHEN v.verdict = 'SUPPORTED' THEN 'supported' ELSE 'not supported' END
               AS judge_label,
           CASE WHEN (v.verdict = 'SUPPORTED') = (rv.label = 'agree') THEN 'supported'
                ELSE 'not supported' END AS human_label,
           NULL::DOUBLE, NULL::DOUBLE
    FROM rv
    JOIN verdicts AS v
      ON v.run_id = rv.run_id AND v.iteration = rv.iteration AND v.sample_id = rv.sample_id
     AND v.candidate = rv.candidate AND v.claim_index::VARCHAR = rv.item_id
    WHERE rv.item = 'verdict'
),
responses AS (
    SELECT rv.*, s.*
           EXCLUDE (run_id, iteration, sample_id, candidate, domain, ai_provider, query, tags,
                    error),
           res.passed
    FROM rv
    JOIN result_scores AS s
      ON s.run_id = rv.run_id AND s.iteration = rv.iteration AND s.sample_id = rv.sample_id
     AND s.candidate = rv.candidate
    JOIN results AS res
      ON res.run_id = rv.run_id AND res.iteration = rv.iteration
     AND res.sample_id = rv.sample_id AND res.candidate = rv.candidate
    WHERE rv.item = 'response'
),
pass_pairs AS (
    SELECT run_id, iteration, sample_id, candidate, item, item_id, reviewer, reviewed_at,
           review_id, run_judge, 'rubric_pass', 'label',
           CASE WHEN passed THEN 'pass' ELSE 'fail' END,
           CASE WHEN label = 'correct' THEN 'pass' ELSE 'fail' END,
           NULL::DOUBLE, NULL::DOUBLE
    FROM responses
    WHERE passed IS NOT NULL
),
score_pairs AS (
    SELECT p.run_id, p.iteration, p.sample_id, p.candidate, p.item, p.item_id, p.reviewer,
           p.reviewed_at, p.review_id,
           CASE WHEN u.metric IN ('accuracy', 'completeness') THEN p.analyzer
                ELSE p.run_judge END,
           u.metric, 'score', NULL, p.label, u.score,
           CASE p.label WHEN 'correct' THEN 100.0 WHEN 'partly' THEN 50.0 ELSE 0.0 END
    FROM responses AS p
    CROSS JOIN LATERAL (
        VALUES ('judge_faithfulness', p.judge_faithfulness),
               ('judge_completeness', p.judge_completeness),
               ('judge_overall', (p.judge_faithfulness + p.judge_completeness) / 2),
               ('claim_faithfulness', p.claim_faithfulness),
               ('rag_overall', p.rag_overall),
               ('accuracy', p.accuracy),
               ('completeness', p.completeness)
    ) AS u(metric, score)
    WHERE u.score IS NOT NULL
)
SELECT * FROM claim_pairs
UNION ALL SELECT * FROM verdict_pairs
UNION ALL SELECT * FROM pass_pairs
UNION ALL SELECT * FROM score_pairs;
