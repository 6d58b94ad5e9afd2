-- Review: a batch that asks a second annotator to review one completed
-- assignment (e.g. Fashionpedia's expert review). NULL for ordinary batches.
ALTER TABLE batches ADD COLUMN review_of UUID REFERENCES assignments (id);
CREATE UNIQUE INDEX batches_review_of ON batches (review_of) WHERE review_of IS NOT NULL;
