-- Failed logins per account name and per client address, shared by every
-- service instance (so limits hold behind a load balancer) and pruned.
CREATE TABLE login_failures (
    key           TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    last_failure  TIMESTAMPTZ NOT NULL,
    blocked_until TIMESTAMPTZ
);

-- Browsers that have logged in as an account before: the right password
-- from one of them is not blocked by failures others caused on the name.
CREATE TABLE known_devices (
    token_hash TEXT PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users (id),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX known_devices_user ON known_devices (user_id);
