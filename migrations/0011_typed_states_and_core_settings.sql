-- States and roles become enum types, so no stray string can be stored and
-- the code compares typed values, not literals.
CREATE TYPE campaign_state AS ENUM ('draft', 'open', 'closed');
CREATE TYPE assignment_state AS ENUM ('active', 'completed', 'expired');
CREATE TYPE user_role AS ENUM ('admin', 'expert', 'worker');
-- Who works on a campaign: crowd workers (invitation links) or experts (accounts).
CREATE TYPE participants AS ENUM ('crowd', 'experts');

ALTER TABLE campaigns DROP CONSTRAINT campaigns_state_check;
ALTER TABLE campaigns ALTER COLUMN state DROP DEFAULT;
ALTER TABLE campaigns ALTER COLUMN state TYPE campaign_state USING state::campaign_state;
ALTER TABLE campaigns ALTER COLUMN state SET DEFAULT 'draft';

ALTER TABLE assignments DROP CONSTRAINT assignments_state_check;
ALTER TABLE assignments ALTER COLUMN state DROP DEFAULT;
ALTER TABLE assignments ALTER COLUMN state TYPE assignment_state USING state::assignment_state;
ALTER TABLE assignments ALTER COLUMN state SET DEFAULT 'active';

-- The role checks were stored comparing with text: drop and restate them.
ALTER TABLE users DROP CONSTRAINT users_role_check;
DO $$
DECLARE c record;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'users'::regclass AND contype = 'c' LOOP
        EXECUTE format('ALTER TABLE users DROP CONSTRAINT %I', c.conname);
    END LOOP;
END $$;
ALTER TABLE users ALTER COLUMN role TYPE user_role USING role::user_role;
ALTER TABLE users ADD CONSTRAINT users_workers_have_external_ids CHECK ((role = 'worker') = (external_id IS NOT NULL));
ALTER TABLE users ADD CONSTRAINT users_accounts_have_passwords
    CHECK (role = 'worker' OR (name IS NOT NULL AND password_hash IS NOT NULL));

-- The core's own settings, typed and validated here, apart from the kind's
-- configuration (which stays in `config`). They used to live in `config`.
ALTER TABLE campaigns
    ADD COLUMN participants participants NOT NULL DEFAULT 'crowd',
    ADD COLUMN lease_minutes INTEGER NOT NULL DEFAULT 60 CHECK (lease_minutes BETWEEN 1 AND 10080),
    ADD COLUMN review BOOLEAN NOT NULL DEFAULT false,
    -- Annotators per batch: NULL = as the kind plans its batches, 0 = every
    -- annotator with access, n = n annotators.
    ADD COLUMN annotators_per_batch INTEGER CHECK (annotators_per_batch >= 0);
-- Every kind before this migration was a crowd kind, and review is no
-- longer allowed on crowd campaigns (it showed workers each other's answers),
-- so `review` is dropped from them rather than carried over.
UPDATE campaigns SET
    lease_minutes = CASE WHEN jsonb_typeof(config -> 'lease_minutes') = 'number'
                         THEN least(greatest((config ->> 'lease_minutes')::numeric::int, 1), 10080) ELSE 60 END,
    config = config - 'lease_minutes' - 'review';
-- Review needs experts: a crowd worker must never see another worker's answers.
ALTER TABLE campaigns ADD CONSTRAINT campaigns_review_needs_experts CHECK (NOT review OR participants = 'experts');
