-- Where a crowd worker goes when they finish: the platform's completion
-- address (Prolific gives one per study, with its code). Optional.
ALTER TABLE campaigns ADD COLUMN completion_url TEXT
    CHECK (completion_url IS NULL OR completion_url ~ '^https?://');
