-- Each stored answer checked four foreign keys that the two composite ones of
-- 0012 already imply: a response's (assignment, campaign, annotator) must be
-- an assignment's, whose campaign and annotator reference campaigns and
-- users; its (item, campaign) must be an item's. The single-column keys cost
-- every vote four more lookups, and the one on campaigns a shared lock on the
-- campaign's row that every concurrent vote contends for.
ALTER TABLE responses DROP CONSTRAINT responses_assignment_id_fkey;
ALTER TABLE responses DROP CONSTRAINT responses_campaign_id_fkey;
ALTER TABLE responses DROP CONSTRAINT responses_item_id_fkey;
ALTER TABLE responses DROP CONSTRAINT responses_annotator_id_fkey;

-- The unique (assignment_id, item_id) index serves every lookup by assignment.
DROP INDEX responses_assignment;
