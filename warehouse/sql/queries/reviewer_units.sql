-- Items two or more people reviewed (view review_latest: each reviewer's latest), for
-- reviewer-vs-reviewer agreement: one row per (item, reviewer) with the label's value.
-- Responses are ordinal (incorrect 0, partly 1, correct 2); claims (found / missing /
-- contradicted) and verdicts (agree / disagree) nominal, coded by their label.
-- $run_ids (list, null = all) keeps the reviews of those runs.
WITH latest AS (
    SELECT *, lower(trim(reviewer)) AS who,
           concat_ws('|', run_id, iteration, sample_id, candidate, item, item_id) AS unit
    FROM review_latest
    WHERE $run_ids IS NULL OR list_contains($run_ids, run_id)
),
twice AS (
    SELECT unit FROM latest GROUP BY unit HAVING count(DISTINCT who) > 1
)
SELECT item, unit, who AS reviewer, label,
       CASE item WHEN 'response' THEN
                     CASE label WHEN 'incorrect' THEN 0 WHEN 'partly' THEN 1 ELSE 2 END
                 WHEN 'claim' THEN
                     CASE label WHEN 'found' THEN 0 WHEN 'missing' THEN 1 ELSE 2 END
                 ELSE CASE label WHEN 'agree' THEN 0 ELSE 1 END END::DOUBLE AS value
FROM latest
JOIN twice USING (unit)
ORDER BY item, unit, reviewer;
