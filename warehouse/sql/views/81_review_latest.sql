-- Each reviewer's latest judgment of each item (the response, an expected claim, a judge
-- verdict) of each sample: a person who reviews an item again replaces their own earlier
-- review, never another person's. Reviewer names compare trimmed and case-insensitively.
CREATE OR REPLACE VIEW review_latest AS
SELECT *
FROM reviews
QUALIFY row_number() OVER (
    PARTITION BY lower(trim(reviewer)), run_id, iteration, sample_id, candidate, item, item_id
    ORDER BY reviewed_at DESC, review_id DESC
) = 1;
