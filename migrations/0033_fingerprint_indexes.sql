-- The ground truth's fingerprint (src/core/aggregate_cache.rs) reads what
-- changed in a campaign's responses from two small indexes instead of
-- scanning every response (73 ms at VTON-QBench size, on every cached read):
-- answers changed after they were stored, and exclusions with their times.
-- Storing a vote enters neither (new rows have updated_at = created_at and
-- no exclusion); new responses are counted through the assignments' kept
-- counts (0018), as responses are never deleted.
CREATE INDEX responses_changed ON responses (campaign_id, updated_at) WHERE updated_at > created_at;
-- Replaces responses_excluded (0021), which counted the same rows.
CREATE INDEX responses_excluded_at ON responses (campaign_id, excluded_at) WHERE excluded_reason IS NOT NULL;
DROP INDEX responses_excluded;
