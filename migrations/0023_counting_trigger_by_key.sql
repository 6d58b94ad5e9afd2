-- 0022 replaced the answer counter's function, and CREATE OR REPLACE drops
-- the settings 0019 gave it: its update went back to scanning every
-- assignment (a hash join over a sequential scan, seen in a profile of the
-- vote bench). The same setting again: a handful of lookups by key.
ALTER FUNCTION count_stored_answers() SET enable_seqscan = off;
