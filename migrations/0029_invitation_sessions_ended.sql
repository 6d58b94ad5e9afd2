-- "Revoke and end sessions": a link whose workers' sessions were ended at
-- once (a leaked link's bots). Nobody gets back in through it, not even
-- those who joined: a plain revocation still lets them finish and see
-- their code.
ALTER TABLE invitations ADD COLUMN sessions_ended_at TIMESTAMPTZ;
ALTER TABLE invitations ADD CONSTRAINT invitations_ended_are_revoked
    CHECK (sessions_ended_at IS NULL OR revoked_at IS NOT NULL);
