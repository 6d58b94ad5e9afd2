-- The crowd platform's ids of a worker's visit through an invitation link:
-- Prolific's STUDY_ID and SESSION_ID, MTurk's assignmentId and hitId. Kept
-- with the join (the last visit's) and written into the payouts file, which
-- the platforms match submissions by.
ALTER TABLE invitation_joins ADD COLUMN platform_ids JSONB
    CHECK (platform_ids IS NULL OR jsonb_typeof(platform_ids) = 'object');
