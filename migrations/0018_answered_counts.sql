-- How many answers an assignment holds, kept on the assignment itself: the
-- vote path locks that row anyway, and reading the count there is exact
-- (the latest version, after any concurrent vote on the same assignment
-- committed) where counting the responses read up to one heap page per
-- answer. A trigger keeps it for every statement that stores answers.
ALTER TABLE assignments ADD COLUMN answered INTEGER NOT NULL DEFAULT 0;
-- Room on each page so that the count's updates stay on the page (HOT).
ALTER TABLE assignments SET (fillfactor = 80);
UPDATE assignments a SET answered = c.n
FROM (SELECT assignment_id, count(*)::int AS n FROM responses GROUP BY assignment_id) c
WHERE a.id = c.assignment_id;

CREATE FUNCTION count_stored_answers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE assignments a SET answered = a.answered + n.k
    FROM (SELECT assignment_id, count(*)::int AS k FROM stored GROUP BY assignment_id) n
    WHERE a.id = n.assignment_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER responses_count_answers AFTER INSERT ON responses
    REFERENCING NEW TABLE AS stored FOR EACH STATEMENT EXECUTE FUNCTION count_stored_answers();

-- Responses are never deleted nor moved to another assignment: the count
-- only grows, and this keeps it so.
CREATE FUNCTION refuse_moving_answers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'responses are never deleted or moved to another assignment'
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER responses_stay_put BEFORE DELETE OR UPDATE OF assignment_id ON responses
    FOR EACH ROW EXECUTE FUNCTION refuse_moving_answers();
