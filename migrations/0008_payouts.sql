-- Payouts an admin has marked as done on the crowd platform.
CREATE TABLE payouts (
    campaign_id  UUID NOT NULL REFERENCES campaigns (id),
    annotator_id UUID NOT NULL REFERENCES users (id),
    paid_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    paid_by      UUID REFERENCES users (id),
    PRIMARY KEY (campaign_id, annotator_id)
);
