-- Compare's "group by" choices for a run: domain always; provider when its samples come
-- from more than one; tag when any sample has a tag; meta:<field> for every field of the
-- cases' metadata, sorted by name.
SELECT 'domain' AS field
UNION ALL
SELECT 'provider' FROM results WHERE run_id = $run_id HAVING count(DISTINCT ai_provider) > 1
UNION ALL
SELECT 'tag' FROM results WHERE run_id = $run_id AND len(tags) > 0 HAVING count(*) > 0
UNION ALL
SELECT * FROM (
    SELECT DISTINCT 'meta:' || unnest(json_keys(case_json, '$.metadata')) AS field
    FROM cases
    WHERE run_id = $run_id
    ORDER BY field
);
