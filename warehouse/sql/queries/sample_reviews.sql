-- The latest review of each reviewer of each item of one sample (view review_latest).
SELECT reviewer, reviewed_at, item, item_id, item_text, label, machine_label, comment
FROM review_latest
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate
ORDER BY reviewed_at DESC, reviewer, item, item_id;
