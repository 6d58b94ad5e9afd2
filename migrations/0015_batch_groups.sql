-- A batch's group as its kind formed it (e.g. Fashionpedia's attribute
-- super-category), so a kind can say which annotators may take it.
ALTER TABLE batches ADD COLUMN grouping TEXT;
