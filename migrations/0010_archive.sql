-- Archived campaigns: hidden from the default list, read-only, still exportable.
ALTER TABLE campaigns ADD COLUMN archived_at TIMESTAMPTZ;
