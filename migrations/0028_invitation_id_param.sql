-- The name of the query parameter a link reads the worker's id from (a
-- generic platform's own name, e.g. `participant`); `worker_id` by default.
-- Prolific's PROLIFIC_PID and MTurk's workerId are read on every link.
ALTER TABLE invitations ADD COLUMN id_param TEXT NOT NULL DEFAULT 'worker_id'
    CHECK (id_param ~ '^[A-Za-z][A-Za-z0-9_.-]{0,63}$');
