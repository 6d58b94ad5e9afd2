-- An admin disables an expert's or admin's account instead of deleting it:
-- their answers, reviews and releases keep their author. A disabled account
-- cannot log in, its sessions are ended and its API tokens stop working.
ALTER TABLE users ADD COLUMN disabled_at TIMESTAMPTZ;
ALTER TABLE users ADD CONSTRAINT only_accounts_are_disabled CHECK (disabled_at IS NULL OR role <> 'worker');
