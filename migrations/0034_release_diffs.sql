-- Releases never change, so neither does what changed between two of them:
-- each pair's diff is computed once (it unpacks and reads both archives,
-- about 0.9 s at 30,000 questions) and kept here, so the diff page's later
-- views and its pages read it. A diff made by another Atelier version is
-- made again (its rules may differ). It goes with its releases.
CREATE TABLE release_diffs (
    campaign_id     UUID NOT NULL,
    from_number     INTEGER NOT NULL,
    to_number       INTEGER NOT NULL,
    atelier_version TEXT NOT NULL,
    diff            JSONB NOT NULL,
    PRIMARY KEY (campaign_id, from_number, to_number),
    FOREIGN KEY (campaign_id, from_number) REFERENCES releases (campaign_id, number) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, to_number) REFERENCES releases (campaign_id, number) ON DELETE CASCADE
);
