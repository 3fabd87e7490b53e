-- Overview chart: result rows per (domain, metric, tier) of one run under the filters.
WITH filtered AS (
    SELECT domain, accuracy_tier, completeness_tier, attribution_tier
    FROM results
    WHERE run_id = $run_id
      AND ($candidate IS NULL OR candidate = $candidate)
      AND ($providers IS NULL OR list_contains($providers, ai_provider))
      AND ($tag IS NULL OR list_contains(tags, $tag))
)
SELECT domain, metric, tier, count(*) AS samples
FROM (
    SELECT domain, 'accuracy' AS metric, accuracy_tier AS tier FROM filtered
    UNION ALL
    SELECT domain, 'completeness', completeness_tier FROM filtered
    UNION ALL
    SELECT domain, 'attribution', attribution_tier FROM filtered
)
WHERE tier IS NOT NULL
GROUP BY ALL
ORDER BY domain, metric, tier;
