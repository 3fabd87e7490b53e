-- Per run: how sure the deciding model was of its claim verdicts (verdicts.confidence: a
-- verifier's probability, or the local combiner's; null for a rule's verdict). decided_share
-- is the share of verdicts with a confidence that are at or above the bar of 0.6
-- (engine.scoring.judging.CONFIDENCE_BAR); samples below it are flagged low_confidence.
CREATE OR REPLACE VIEW verdict_confidence AS
SELECT
    run_id,
    count(*) AS verdicts,
    count(confidence) AS with_confidence,
    count(*) FILTER (WHERE confidence >= 0.6) AS decided,
    count(*) FILTER (WHERE confidence >= 0.6) / nullif(count(confidence), 0) AS decided_share,
    avg(confidence) AS mean_confidence
FROM verdicts
GROUP BY run_id;
