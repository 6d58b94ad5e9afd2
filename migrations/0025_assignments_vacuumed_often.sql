-- Every stored answer updates its assignment's answer count: after a burst of
-- votes the table holds many row versions not yet pruned, and the campaign
-- page's scans of it run several times slower until a vacuum has passed.
-- Vacuum it after every 20,000 updates whatever its size (the default waits
-- for a fifth of the table, and a campaign's assignments are few and hot).
ALTER TABLE assignments SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);
