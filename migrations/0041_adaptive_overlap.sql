-- Adaptive overlap (crowd campaigns): how many raters each item gets.
ALTER TABLE campaigns ADD COLUMN overlap JSONB NOT NULL DEFAULT '{"mode": "fixed"}'
    CHECK (overlap ->> 'mode' IN ('fixed', 'adaptive'));

-- Per item of an adaptive campaign: settled (decided by its kind's rule,
-- or at the maximum) or waiting, once every questionnaire holding it is
-- full, to be formed into a questionnaire of undecided items.
CREATE TABLE adaptive_items (
    item_id     UUID PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    campaign_id UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    raters      INTEGER NOT NULL CHECK (raters >= 0),
    state       TEXT NOT NULL CHECK (state IN ('settled', 'waiting', 'queued')),
    decided     BOOLEAN NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX adaptive_items_waiting ON adaptive_items (campaign_id) WHERE state = 'waiting';

-- The overlap the campaign's batches planned (what fixed overlap would
-- have given each item), kept at formation for the saved-ratings figure.
ALTER TABLE campaigns ADD COLUMN planned_overlap INTEGER CHECK (planned_overlap IS NULL OR planned_overlap > 0);
