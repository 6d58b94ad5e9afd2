-- What made each API token (the login API, an admin, the command line), so
-- that an account's owner can tell their tokens apart on Your account and
-- revoke one; tokens made before this say nothing.
ALTER TABLE api_tokens ADD COLUMN name TEXT CHECK (name IS NULL OR length(name) BETWEEN 1 AND 100);
CREATE INDEX api_tokens_user ON api_tokens (user_id) WHERE revoked_at IS NULL;
