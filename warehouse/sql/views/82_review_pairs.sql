-- Every latest review (view review_latest) next to what evalhouse said about the same item,
-- one row per (review, metric): the material of judge agreement.
-- kind = 'label' (categorical; compare judge_label with human_label), from the review's
-- machine_label (what evalhouse said when the person reviewed the item; lake records never
-- change, so it is what the warehouse holds, without a join over the large claims table):
--   claim_status   the analyzer's found / missing / contradicted vs the reviewer's
--   claim_verdict  the judge's verdict as supported / not supported; the reviewer's label is
--                  the judge's when they agree, the other one when they disagree
--   rubric_pass    the rubric's pass / fail vs the reviewer (correct = pass; partly and
--                  incorrect = fail); responses without a rubric verdict have none
-- kind = 'score' (numeric; judge_score in its 0-100 form, view result_scores, vs
--   human_score: correct 100, partly 50, incorrect 0): judge_faithfulness,
--   judge_completeness, judge_overall, claim_faithfulness, rag_overall, accuracy,
--   completeness.
-- judge names who produced the machine side: runs.judge, or 'analyzer:<embedder>' for the
-- analyzer's claim status, accuracy and completeness.
CREATE OR REPLACE VIEW review_pairs AS
WITH rv AS (
    SELECT rv.*, r.judge AS run_judge, 'analyzer:' || r.embedder AS analyzer
    FROM review_latest AS rv
    JOIN runs AS r USING (run_id)
),
label_pairs AS (
    SELECT run_id, iteration, sample_id, candidate, item, item_id, reviewer, reviewed_at,
           review_id,
           CASE item WHEN 'claim' THEN analyzer ELSE run_judge END AS judge,
           CASE item WHEN 'claim' THEN 'claim_status' WHEN 'verdict' THEN 'claim_verdict'
                ELSE 'rubric_pass' END AS metric,
           'label' AS kind,
           CASE item
               WHEN 'verdict' THEN CASE WHEN machine_label = 'SUPPORTED' THEN 'supported'
                                        ELSE 'not supported' END
               ELSE machine_label END AS judge_label,
           CASE item
               WHEN 'verdict' THEN
                   CASE WHEN (machine_label = 'SUPPORTED') = (label = 'agree') THEN 'supported'
                        ELSE 'not supported' END
               WHEN 'response' THEN CASE WHEN label = 'correct' THEN 'pass' ELSE 'fail' END
               ELSE label END AS human_label,
           NULL::DOUBLE AS judge_score,
           NULL::DOUBLE AS human_score
    FROM rv
    WHERE machine_label IS NOT NULL
),
score_pairs AS (
    SELECT rv.run_id, rv.iteration, rv.sample_id, rv.candidate, rv.item, rv.item_id,
           rv.reviewer, rv.reviewed_at, rv.review_id,
           CASE WHEN u.metric IN ('accuracy', 'completeness') THEN rv.analyzer
                ELSE rv.run_judge END,
           u.metric, 'score', NULL, rv.label, u.score,
           CASE rv.label WHEN 'correct' THEN 100.0 WHEN 'partly' THEN 50.0 ELSE 0.0 END
    FROM rv
    JOIN result_scores AS s
      ON s.run_id = rv.run_id AND s.iteration = rv.iteration AND s.sample_id = rv.sample_id
     AND s.candidate = rv.candidate
    CROSS JOIN LATERAL (
        VALUES ('judge_faithfulness', s.judge_faithfulness_100),
               ('judge_completeness', s.judge_completeness_100),
               ('judge_overall', (s.judge_faithfulness_100 + s.judge_completeness_100) / 2),
               ('claim_faithfulness', s.claim_faithfulness_100),
               ('rag_overall', s.rag_overall_100),
               ('accuracy', s.accuracy),
               ('completeness', s.completeness)
    ) AS u(metric, score)
    WHERE rv.item = 'response' AND u.score IS NOT NULL
)
SELECT * FROM label_pairs
UNION ALL
SELECT * FROM score_pairs;
