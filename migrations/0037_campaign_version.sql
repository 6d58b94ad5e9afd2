-- A campaign's version, bumped by every change to its row, so that a
-- service may keep a campaign in memory and check it against one number
-- read with the page that needs it (the task page after every answer read
-- the whole row and decoded its configuration each time).
ALTER TABLE campaigns ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION campaigns_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := OLD.version + 1;
    RETURN NEW;
END
$$;

CREATE TRIGGER campaigns_bump_version BEFORE UPDATE ON campaigns
    FOR EACH ROW EXECUTE FUNCTION campaigns_bump_version();
