-- Annotators stopped from receiving further batches in a campaign (e.g. a
-- crowd worker who failed the sanity tasks, in live mode).
CREATE TABLE annotator_blocks (
    campaign_id  UUID NOT NULL REFERENCES campaigns (id),
    annotator_id UUID NOT NULL REFERENCES users (id),
    reason       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, annotator_id)
);
