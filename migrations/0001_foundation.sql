-- Accounts, sessions and the generic annotation core.

CREATE TABLE users (
    id            UUID PRIMARY KEY,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'expert', 'worker')),
    -- Admins and experts log in by name; crowd workers have none.
    name          TEXT UNIQUE,
    password_hash TEXT,
    -- The id a crowd platform (Prolific, MTurk) gives a worker.
    external_id   TEXT UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((role = 'worker') = (external_id IS NOT NULL)),
    CHECK ((role = 'worker') OR (name IS NOT NULL AND password_hash IS NOT NULL))
);

CREATE TABLE api_tokens (
    id           UUID PRIMARY KEY,
    user_id      UUID NOT NULL REFERENCES users (id),
    -- SHA-256 of the token; the token itself is shown once and never stored.
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);

CREATE TABLE campaigns (
    id              UUID PRIMARY KEY,
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'open', 'closed')),
    config          JSONB NOT NULL DEFAULT '{}'::jsonb,
    -- Shown to crowd workers at the end, for the crowd platform to verify.
    completion_code TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE invitations (
    token       TEXT PRIMARY KEY,
    campaign_id UUID NOT NULL REFERENCES campaigns (id),
    created_by  UUID NOT NULL REFERENCES users (id),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at  TIMESTAMPTZ
);

CREATE TABLE items (
    id          UUID PRIMARY KEY,
    campaign_id UUID NOT NULL REFERENCES campaigns (id),
    external_id TEXT NOT NULL,
    payload     JSONB NOT NULL,
    -- Known answer (sanity / gold / answer key); never sent to annotators.
    gold        JSONB,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, external_id)
);

CREATE TABLE batches (
    id          UUID PRIMARY KEY,
    campaign_id UUID NOT NULL REFERENCES campaigns (id),
    position    INTEGER NOT NULL,
    -- How many annotators should complete this batch; NULL = every eligible annotator.
    overlap     INTEGER CHECK (overlap IS NULL OR overlap > 0),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, position)
);

CREATE TABLE batch_items (
    batch_id UUID NOT NULL REFERENCES batches (id),
    position INTEGER NOT NULL,
    item_id  UUID NOT NULL REFERENCES items (id),
    PRIMARY KEY (batch_id, position),
    UNIQUE (batch_id, item_id)
);
CREATE INDEX batch_items_item ON batch_items (item_id);

CREATE TABLE assignments (
    id            UUID PRIMARY KEY,
    batch_id      UUID NOT NULL REFERENCES batches (id),
    campaign_id   UUID NOT NULL REFERENCES campaigns (id),
    annotator_id  UUID NOT NULL REFERENCES users (id),
    state         TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'completed', 'expired')),
    -- The order this annotator sees: item ids, and per item any presentation
    -- shuffle (e.g. choice order), so analysis can undo it.
    presentation  JSONB NOT NULL,
    leased_until  TIMESTAMPTZ NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    completed_at  TIMESTAMPTZ,
    UNIQUE (batch_id, annotator_id)
);
CREATE INDEX assignments_annotator ON assignments (annotator_id, state);
CREATE INDEX assignments_batch ON assignments (batch_id, state);

CREATE TABLE responses (
    id               UUID PRIMARY KEY,
    assignment_id    UUID NOT NULL REFERENCES assignments (id),
    campaign_id      UUID NOT NULL REFERENCES campaigns (id),
    item_id          UUID NOT NULL REFERENCES items (id),
    annotator_id     UUID NOT NULL REFERENCES users (id),
    answer           JSONB NOT NULL,
    time_on_task_ms  INTEGER,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Curation never deletes: it marks a response excluded and says why.
    excluded_reason  TEXT,
    excluded_at      TIMESTAMPTZ,
    -- Once per item and assignment. Shared gold (sanity) items may meet an
    -- annotator again in another batch; assignment never gives anyone a
    -- batch with a non-gold item they already answered.
    UNIQUE (assignment_id, item_id)
);
CREATE INDEX responses_annotator_item ON responses (annotator_id, item_id);
CREATE INDEX responses_campaign ON responses (campaign_id);
CREATE INDEX responses_assignment ON responses (assignment_id);

-- Every explicit change of an answer, for audit.
CREATE TABLE response_changes (
    id          UUID PRIMARY KEY,
    response_id UUID NOT NULL REFERENCES responses (id),
    old_answer  JSONB NOT NULL,
    new_answer  JSONB NOT NULL,
    changed_by  UUID NOT NULL REFERENCES users (id),
    changed_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
