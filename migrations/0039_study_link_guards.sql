-- Guards on study links (crowd campaigns), so that invented worker ids
-- cannot fill a study or decide its ground truth.

-- Workers whose sessions an admin ended through a link: they are kept out
-- of the campaign through every link, until an admin lets them back in.
CREATE TABLE campaign_ended_workers (
    campaign_id UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    worker_id   UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    ended_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, worker_id)
);

-- Where a join came from (a keyed hash of the client's address, never the
-- address), to limit new worker ids per address.
ALTER TABLE invitation_joins ADD COLUMN address_hash TEXT;
CREATE INDEX invitation_joins_address ON invitation_joins (address_hash, joined_at) WHERE address_hash IS NOT NULL;

-- The campaign's rules for study links and for whose work counts.
ALTER TABLE campaigns
    ADD COLUMN joins_per_address INTEGER NOT NULL DEFAULT 10 CHECK (joins_per_address BETWEEN 0 AND 10000),
    ADD COLUMN first_answer_within INTEGER NOT NULL DEFAULT 10 CHECK (first_answer_within BETWEEN 0 AND 1440),
    ADD COLUMN ground_truth_from TEXT NOT NULL DEFAULT 'all' CHECK (ground_truth_from IN ('all', 'reconciled'));

-- The crowd platform's own list of submissions (Prolific's submissions
-- export, MTurk's batch results), as the admin last uploaded it: who the
-- platform knows, with its status. Replaced whole by each upload.
CREATE TABLE platform_submissions (
    campaign_id    UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    platform       TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    participant_id TEXT NOT NULL CHECK (length(participant_id) BETWEEN 1 AND 200),
    -- MTurk's AssignmentId; empty for Prolific.
    assignment_id  TEXT NOT NULL DEFAULT '' CHECK (length(assignment_id) <= 200),
    status         TEXT NOT NULL CHECK (length(status) BETWEEN 1 AND 100),
    -- Whether the platform rejected (or the participant returned) it: such
    -- work never counts under `ground_truth_from = reconciled`.
    rejected       BOOLEAN NOT NULL,
    uploaded_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, participant_id, assignment_id)
);
