-- The Fashionpedia kind's ontology per campaign (categories and attributes
-- in the released layout). Owned by src/kinds/fashionpedia.
CREATE TABLE fashionpedia_ontologies (
    campaign_id UUID PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    ontology    JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
