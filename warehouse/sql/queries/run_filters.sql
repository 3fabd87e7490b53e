-- The values the dashboard's filters offer for one run: providers, tags, candidates, domains.
SELECT 'provider' AS kind, ai_provider AS value FROM results WHERE run_id = $run_id GROUP BY ai_provider
UNION ALL
SELECT 'tag', tag FROM (SELECT unnest(tags) AS tag FROM results WHERE run_id = $run_id) GROUP BY tag
UNION ALL
SELECT 'candidate', candidate FROM results WHERE run_id = $run_id GROUP BY candidate
UNION ALL
SELECT 'domain', domain FROM results WHERE run_id = $run_id GROUP BY domain
ORDER BY kind, value;
