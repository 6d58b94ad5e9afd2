-- What a crowd worker reads before the first task: the campaign's own
-- instructions (text; a line that is an image's address shows the image),
-- the estimated time and pay, and a consent text to agree to. And who
-- agreed to which consent text, when.
CREATE TABLE campaign_intros (
    campaign_id       UUID PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    text              TEXT NOT NULL DEFAULT '' CHECK (length(text) <= 20000),
    estimated_minutes INTEGER CHECK (estimated_minutes BETWEEN 1 AND 1440),
    pay               TEXT CHECK (length(pay) BETWEEN 1 AND 100),
    consent           TEXT CHECK (length(consent) BETWEEN 1 AND 20000)
);

CREATE TABLE consents (
    campaign_id  UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    annotator_id UUID NOT NULL REFERENCES users (id),
    consent      TEXT NOT NULL,
    given_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, annotator_id)
);
