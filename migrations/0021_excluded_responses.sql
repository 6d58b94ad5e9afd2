-- The campaign page counts excluded responses; the other figures come from
-- the assignments' kept answer counts (0018). Only excluded rows are in this
-- index: storing a vote never touches it.
CREATE INDEX responses_excluded ON responses (campaign_id) WHERE excluded_reason IS NOT NULL;
