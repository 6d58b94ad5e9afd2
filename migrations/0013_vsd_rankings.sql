-- The VSD kind's model rankings: every model's ranked candidates per query,
-- kept whole (not only the top k) so k can change and the second negative
-- setting can sample ranks 100-500. Owned by src/kinds/vsd.
CREATE TABLE vsd_rankings (
    campaign_id UUID NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    query       TEXT NOT NULL,
    candidate   TEXT NOT NULL,
    rank        INTEGER NOT NULL CHECK (rank >= 0),
    score       DOUBLE PRECISION,
    PRIMARY KEY (campaign_id, model, query, candidate)
);
CREATE INDEX vsd_rankings_rank ON vsd_rankings (campaign_id, rank);
