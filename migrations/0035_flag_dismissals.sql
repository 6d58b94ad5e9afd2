-- An admin looked at an item's flags (an image reported broken, "not sure")
-- and found nothing to do: answers raising a flag before `dismissed_at` are
-- no longer open flags in the data browser. The ground truth is not
-- affected. Owned by `core::item_browser`.
CREATE TABLE flag_dismissals (
    item_id      UUID PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    dismissed_by UUID NOT NULL REFERENCES users (id),
    dismissed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
