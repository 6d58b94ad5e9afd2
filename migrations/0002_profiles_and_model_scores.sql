-- Participants' background answers (asked by a campaign before its first task).
CREATE TABLE participant_profiles (
    campaign_id  UUID NOT NULL REFERENCES campaigns (id),
    annotator_id UUID NOT NULL REFERENCES users (id),
    answers      JSONB NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, annotator_id)
);

-- Model scores submitted by admins, kept side by side per campaign.
CREATE TABLE model_scores (
    id          UUID PRIMARY KEY,
    campaign_id UUID NOT NULL REFERENCES campaigns (id),
    model       TEXT NOT NULL,
    answers     JSONB NOT NULL,
    result      JSONB NOT NULL,
    created_by  UUID NOT NULL REFERENCES users (id),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, model)
);
