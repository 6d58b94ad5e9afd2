-- Places on an invitation link, as a crowd platform's study has them (the
-- link admits that many workers, and those who joined may always return),
-- and who joined through each link.
ALTER TABLE invitations ADD COLUMN places INT CHECK (places IS NULL OR places > 0);

CREATE TABLE invitation_joins (
    token     TEXT NOT NULL REFERENCES invitations (token) ON DELETE CASCADE,
    worker_id UUID NOT NULL REFERENCES users (id),
    joined_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (token, worker_id)
);
