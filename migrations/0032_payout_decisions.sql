-- An admin's own decision on one worker of a campaign, over the
-- recommendation: approve or reject (with the reason the platform shows the
-- worker), and a bonus (an amount like 0.50, the same rule as the bulk
-- bonus: more than 0, below 100, at most two decimals).
CREATE TABLE payout_decisions (
    campaign_id  UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    annotator_id UUID NOT NULL REFERENCES users (id),
    decision     TEXT CHECK (decision IN ('approve', 'reject')),
    reason       TEXT,
    bonus        TEXT CHECK (bonus ~ '^([1-9][0-9]?(\.[0-9]{1,2})?|0?\.([1-9][0-9]?|0[1-9]))$'),
    decided_by   UUID NOT NULL REFERENCES users (id),
    decided_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, annotator_id),
    -- A rejection says why; an approval has nothing to explain.
    CHECK ((decision = 'reject') = (reason IS NOT NULL AND reason ~ '\S')),
    -- A row with nothing decided is no row.
    CHECK (decision IS NOT NULL OR bonus IS NOT NULL)
);
