-- A release's archive is already gzip: PostgreSQL's own compression of
-- TOASTed values only burns CPU on it (pglz was ~3 % of a cut's time at
-- VTON-QBench size). Stored out of line, uncompressed, from now on.
ALTER TABLE releases ALTER COLUMN archive SET STORAGE EXTERNAL;
