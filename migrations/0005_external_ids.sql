-- Ids that batches and assignments had in a source imported from elsewhere
-- (e.g. VTON-QBench's form_id and response_id), kept for exports.
ALTER TABLE batches ADD COLUMN external_id TEXT;
ALTER TABLE assignments ADD COLUMN external_id TEXT;
