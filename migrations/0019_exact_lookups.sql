-- A shared item (a sanity task sits in every questionnaire) has one entry in
-- batch_items per batch. Checking "is this item in that batch" could pick
-- the index on item_id alone and then filter every batch holding the item:
-- 0.7 ms for a sanity task at 4,000 questionnaires, growing with the
-- campaign. With batch_id beside item_id in that index, either index finds
-- the one entry directly.
CREATE INDEX batch_items_item_batch ON batch_items (item_id, batch_id);
DROP INDEX batch_items_item;

-- The answer counter's update joins the statement's new answers to their
-- assignments. With a few dozen answers the planner preferred scanning
-- every assignment (0.8 ms at 4,000 assignments, growing with the campaign)
-- to looking each one up; it is always a handful of lookups by key.
ALTER FUNCTION count_stored_answers() SET enable_seqscan = off;
