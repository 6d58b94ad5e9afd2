-- A campaign's configuration changes, kept: what it was, what it became, who
-- changed it and how many answers it already had, so an admin (and a
-- release's reader) can see when the rules moved under the answers.
CREATE TABLE campaign_changes (
    id          UUID PRIMARY KEY,
    campaign_id UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    changed_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    changed_by  UUID REFERENCES users (id),
    before      JSONB NOT NULL,
    after       JSONB NOT NULL,
    responses   BIGINT NOT NULL CHECK (responses >= 0)
);
CREATE INDEX campaign_changes_by_campaign ON campaign_changes (campaign_id, changed_at);
