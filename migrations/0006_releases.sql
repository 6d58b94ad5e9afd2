-- Ground-truth releases: immutable, numbered snapshots stored as archives.
CREATE TABLE releases (
    id             UUID PRIMARY KEY,
    campaign_id    UUID NOT NULL REFERENCES campaigns (id),
    number         INTEGER NOT NULL CHECK (number > 0),
    note           TEXT NOT NULL DEFAULT '',
    created_at     TIMESTAMPTZ NOT NULL,
    -- The admin who cut it; NULL when cut from the command line (the name is in the manifest).
    created_by     UUID REFERENCES users (id),
    campaign_state TEXT NOT NULL,
    manifest       JSONB NOT NULL,
    archive        BYTEA NOT NULL,
    UNIQUE (campaign_id, number)
);

-- A release is never changed or deleted, whoever asks.
CREATE FUNCTION releases_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'releases are immutable' USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER releases_immutable BEFORE UPDATE OR DELETE ON releases
    FOR EACH ROW EXECUTE FUNCTION releases_are_immutable();
