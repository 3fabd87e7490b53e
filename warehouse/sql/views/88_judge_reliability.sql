-- Judge reliability, from table judge_asks (one row per ask of a judge about an answer and
-- metric; written when an LLM judge is asked more than once, by iterations or
-- judge_repeats, or a jury scores).
--
-- judge_repeat_spread: one row per (run, candidate, sample, judge, metric, answer). Only
-- asks about the same answer text are repeats of each other (answer_hash = md5 of the
-- response: a target may answer each iteration differently, and a new answer is not the
-- judge varying). asks, the iterations they came from, mean_100, spread_100 (sample
-- standard deviation, 0-100; null with one ask), range_100 (max - min) and flaky: the asks
-- disagree on pass/fail (a score passes at 75 on 0-100, 4 on 1-5).
CREATE OR REPLACE VIEW judge_repeat_spread AS
SELECT a.run_id, a.candidate, a.sample_id, a.judge, a.metric, md5(r.response) AS answer_hash,
       count(*) AS asks,
       count(DISTINCT a.iteration) AS iterations,
       avg(a.score_100) AS mean_100,
       stddev_samp(a.score_100) AS spread_100,
       max(a.score_100) - min(a.score_100) AS range_100,
       count(DISTINCT a.passed) > 1 AS flaky
FROM judge_asks AS a
JOIN results AS r
  ON r.run_id = a.run_id AND r.iteration = a.iteration AND r.sample_id = a.sample_id
 AND r.candidate = a.candidate
GROUP BY a.run_id, a.candidate, a.sample_id, a.judge, a.metric, md5(r.response);

-- judge_reliability: per run, judge and metric, over the answers asked about more than
-- once: answers, asks, flaky_answers and flip_rate (their share whose pass/fail flips),
-- mean_spread_100 (mean of the answers' spreads) and max_range_100. Krippendorff's alpha
-- over the same asks is computed beside it (engine.reliability, the Judge agreement page).
CREATE OR REPLACE VIEW judge_reliability AS
SELECT run_id, judge, metric,
       count(*) AS answers,
       sum(asks) AS asks,
       count(*) FILTER (WHERE flaky) AS flaky_answers,
       avg(flaky::INTEGER) AS flip_rate,
       avg(spread_100) AS mean_spread_100,
       max(range_100) AS max_range_100
FROM judge_repeat_spread
WHERE asks > 1
GROUP BY run_id, judge, metric;

-- jury_agreement: per run, judge and metric of a run scored by a jury (two or more judges
-- on the same answer in the same iteration). Each judge's value on an answer is the mean
-- of its asks and its pass/fail their majority (a tie fails). agreement: over every
-- (answer, other judge) pair, the share where the two judges' pass/fail agree (pairwise,
-- so a judge is never compared with a majority it is part of); mean_gap_100: the mean
-- distance of its 0-100 value from each other judge's.
CREATE OR REPLACE VIEW jury_agreement AS
WITH per_judge AS (
    SELECT run_id, iteration, candidate, sample_id, metric, judge,
           avg(score_100) AS score_100,
           CASE WHEN count(passed) = 0 THEN NULL
                ELSE count(*) FILTER (WHERE passed) > count(*) FILTER (WHERE NOT passed)
           END AS passed
    FROM judge_asks
    GROUP BY run_id, iteration, candidate, sample_id, metric, judge
)
SELECT j.run_id, j.judge, j.metric,
       count(DISTINCT (j.iteration, j.candidate, j.sample_id)) AS answers,
       avg(CASE WHEN j.passed = o.passed THEN 1.0 WHEN j.passed <> o.passed THEN 0.0 END)
           AS agreement,
       avg(abs(j.score_100 - o.score_100)) AS mean_gap_100
FROM per_judge AS j
JOIN per_judge AS o
  ON o.run_id = j.run_id AND o.iteration = j.iteration AND o.candidate = j.candidate
 AND o.sample_id = j.sample_id AND o.metric = j.metric AND o.judge <> j.judge
GROUP BY j.run_id, j.judge, j.metric;
