-- When an item last changed (a merge of a later import into it), so a
-- cached ground truth can tell it is stale.
ALTER TABLE items ADD COLUMN updated_at TIMESTAMPTZ NOT NULL DEFAULT now();
