-- The asks of run $run_id as units for Krippendorff's alpha: per judge and metric, one unit
-- per answer (candidate, sample and answer text, as view judge_repeat_spread groups them),
-- each ask's 0-100 value a coder's value.
SELECT a.judge, a.metric,
       a.candidate || '|' || a.sample_id || '|' || md5(r.response) AS unit,
       a.score_100
FROM judge_asks AS a
JOIN results AS r
  ON r.run_id = a.run_id AND r.iteration = a.iteration AND r.sample_id = a.sample_id
 AND r.candidate = a.candidate
WHERE a.run_id = $run_id AND a.score_100 IS NOT NULL
ORDER BY a.judge, a.metric, unit;
