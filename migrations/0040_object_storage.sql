-- Release archives in the object store: a bucket keeps them (the key, size
-- and SHA-256 are recorded here), a folder store keeps them in this table as
-- before. Exactly one of the two holds every archive.
ALTER TABLE releases
    ADD COLUMN archive_key TEXT CHECK (archive_key IS NULL OR length(archive_key) BETWEEN 1 AND 1024),
    ADD COLUMN archive_size BIGINT CHECK (archive_size IS NULL OR archive_size >= 0),
    ADD COLUMN archive_sha256 TEXT CHECK (archive_sha256 IS NULL OR archive_sha256 ~ '^[0-9a-f]{64}$'),
    ALTER COLUMN archive DROP NOT NULL,
    ADD CONSTRAINT releases_archive_somewhere CHECK (
        (archive IS NOT NULL AND archive_key IS NULL)
        OR (archive IS NULL AND archive_key IS NOT NULL AND archive_size IS NOT NULL AND archive_sha256 IS NOT NULL));

-- Where the service's blobs live once `atelier storage migrate` switched
-- them (one row at most); a --storage flag still wins.
CREATE TABLE storage_location (
    only_row    BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    address     TEXT NOT NULL CHECK (length(address) BETWEEN 1 AND 2048),
    switched_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A release still never changes; its archive may only move between the
-- database and the store, with the same bytes (checked by their SHA-256).
CREATE OR REPLACE FUNCTION releases_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND (NEW.id, NEW.campaign_id, NEW.number, NEW.note, NEW.created_at, NEW.created_by, NEW.campaign_state, NEW.manifest)
           IS NOT DISTINCT FROM
           (OLD.id, OLD.campaign_id, OLD.number, OLD.note, OLD.created_at, OLD.created_by, OLD.campaign_state, OLD.manifest)
       AND coalesce(OLD.archive_sha256, encode(sha256(OLD.archive), 'hex'))
           = coalesce(NEW.archive_sha256, encode(sha256(NEW.archive), 'hex'))
       AND (NEW.archive IS NULL
            OR encode(sha256(NEW.archive), 'hex') = coalesce(OLD.archive_sha256, encode(sha256(OLD.archive), 'hex'))) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'releases are immutable' USING ERRCODE = 'restrict_violation';
END
$$;
