-- The core's invariants, enforced by the database and not only the code.

-- At most one live (active) assignment per annotator and campaign.
CREATE UNIQUE INDEX assignments_one_active_per_annotator
    ON assignments (campaign_id, annotator_id) WHERE state = 'active';

-- An assignment's campaign is its batch's campaign.
ALTER TABLE batches ADD CONSTRAINT batches_id_campaign UNIQUE (id, campaign_id);
ALTER TABLE assignments ADD CONSTRAINT assignments_batch_in_campaign
    FOREIGN KEY (batch_id, campaign_id) REFERENCES batches (id, campaign_id);

-- A response's campaign and annotator are its assignment's (both are copied
-- onto the response for fast queries; now they cannot disagree).
ALTER TABLE assignments ADD CONSTRAINT assignments_id_campaign_annotator UNIQUE (id, campaign_id, annotator_id);
ALTER TABLE responses ADD CONSTRAINT responses_match_assignment
    FOREIGN KEY (assignment_id, campaign_id, annotator_id) REFERENCES assignments (id, campaign_id, annotator_id);

-- An item answered belongs to the response's campaign.
ALTER TABLE items ADD CONSTRAINT items_id_campaign UNIQUE (id, campaign_id);
ALTER TABLE responses ADD CONSTRAINT responses_item_in_campaign
    FOREIGN KEY (item_id, campaign_id) REFERENCES items (id, campaign_id);

-- Timestamps match states.
UPDATE assignments SET completed_at = coalesce(completed_at, created_at) WHERE state = 'completed';
UPDATE assignments SET completed_at = NULL WHERE state <> 'completed';
ALTER TABLE assignments ADD CONSTRAINT assignments_completed_at_matches_state
    CHECK ((state = 'completed') = (completed_at IS NOT NULL));
UPDATE responses SET excluded_at = coalesce(excluded_at, updated_at) WHERE excluded_reason IS NOT NULL;
UPDATE responses SET excluded_at = NULL WHERE excluded_reason IS NULL;
ALTER TABLE responses ADD CONSTRAINT responses_excluded_at_matches_reason
    CHECK ((excluded_reason IS NULL) = (excluded_at IS NULL));
ALTER TABLE responses ADD CONSTRAINT responses_time_on_task_not_negative
    CHECK (time_on_task_ms IS NULL OR time_on_task_ms >= 0);
ALTER TABLE responses ADD CONSTRAINT responses_updated_after_created CHECK (updated_at >= created_at);
ALTER TABLE campaigns ADD CONSTRAINT campaigns_archived_are_closed CHECK (archived_at IS NULL OR state = 'closed');
