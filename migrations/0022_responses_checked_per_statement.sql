-- A response's assignment (with the same campaign and annotator) and its item
-- (in the same campaign) were checked by two composite foreign keys, one
-- query and one row lock per stored answer, about a quarter of a vote's time
-- in PostgreSQL (vote bench, ratio to pgbench: 0.35 -> 0.45 at 16
-- connections, 0.47 -> 0.66 at 64 with the checks done here instead; see
-- BENCHMARKS.md). The statement trigger that counts answers
-- already joins each statement's rows to their assignments; it now checks
-- both rules for all of a statement's rows at once, under the same
-- constraint names, and the referenced rows are kept as the keys kept them:
--   * the count's UPDATE locks every assignment that gains answers, so an
--     assignment is never deleted under an answer being stored (the delete
--     waits, then sees the answer and refuses; or the answer finds it gone);
--   * an assignment that holds answers is never deleted;
--   * items are deleted only from a campaign without assignments (no answer
--     can name them), checked with the campaign's row locked, which every new
--     assignment's foreign key must share;
--   * the keys the rules compare (ids, campaigns, annotators) never change.
ALTER TABLE responses DROP CONSTRAINT responses_match_assignment;
ALTER TABLE responses DROP CONSTRAINT responses_item_in_campaign;

CREATE OR REPLACE FUNCTION count_stored_answers() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    counted bigint;
BEGIN
    WITH per AS (SELECT assignment_id, campaign_id, annotator_id, count(*)::int AS k
                 FROM stored GROUP BY assignment_id, campaign_id, annotator_id),
         counted_on AS (UPDATE assignments a SET answered = a.answered + per.k
                        FROM per
                        WHERE a.id = per.assignment_id AND a.campaign_id = per.campaign_id
                          AND a.annotator_id = per.annotator_id
                        RETURNING per.k)
    SELECT coalesce(sum(k), 0) INTO counted FROM counted_on;
    -- A row whose assignment is missing, or is another campaign's or
    -- annotator's, was not counted.
    IF counted <> (SELECT count(*) FROM stored) THEN
        RAISE EXCEPTION 'a response must belong to its assignment''s campaign and annotator'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'responses_match_assignment';
    END IF;
    IF EXISTS (SELECT 1 FROM stored s
               WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = s.item_id AND i.campaign_id = s.campaign_id)) THEN
        RAISE EXCEPTION 'that item is not part of this campaign'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'responses_item_in_campaign';
    END IF;
    RETURN NULL;
END
$$;

-- An assignment that holds answers stays.
CREATE FUNCTION keep_answered_assignments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM responses WHERE assignment_id = OLD.id) THEN
        RAISE EXCEPTION 'an assignment that holds answers cannot be deleted'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'responses_match_assignment';
    END IF;
    RETURN OLD;
END
$$;
CREATE TRIGGER assignments_keep_answered BEFORE DELETE ON assignments
    FOR EACH ROW EXECUTE FUNCTION keep_answered_assignments();

-- Items go only from campaigns without assignments.
CREATE FUNCTION delete_items_of_unassigned_campaigns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Waits for any assignment being created in these campaigns (its foreign
    -- key shares this row), so the check below sees it.
    PERFORM 1 FROM campaigns WHERE id IN (SELECT campaign_id FROM gone) FOR UPDATE;
    IF EXISTS (SELECT 1 FROM assignments WHERE campaign_id IN (SELECT campaign_id FROM gone)) THEN
        RAISE EXCEPTION 'items of a campaign with assignments cannot be deleted'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'responses_item_in_campaign';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER items_delete_unassigned AFTER DELETE ON items
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION delete_items_of_unassigned_campaigns();

-- The keys the rules compare never change.
CREATE FUNCTION refuse_key_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the keys of % never change', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER assignments_keys_stay BEFORE UPDATE OF id, campaign_id, annotator_id ON assignments
    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id
                       OR OLD.annotator_id IS DISTINCT FROM NEW.annotator_id)
    EXECUTE FUNCTION refuse_key_changes();
CREATE TRIGGER items_keys_stay BEFORE UPDATE OF id, campaign_id ON items
    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id)
    EXECUTE FUNCTION refuse_key_changes();
CREATE TRIGGER responses_keys_stay BEFORE UPDATE OF id, campaign_id, annotator_id, item_id ON responses
    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id
                       OR OLD.annotator_id IS DISTINCT FROM NEW.annotator_id OR OLD.item_id IS DISTINCT FROM NEW.item_id)
    EXECUTE FUNCTION refuse_key_changes();
