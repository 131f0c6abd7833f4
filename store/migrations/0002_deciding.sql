-- An approval's decision in flight: who clicked (or the deadline) and what
-- was sent, held from the click until the backend answers, so that two
-- clicks at once send exactly one decision. NULL when none is in flight.
ALTER TABLE approvals ADD COLUMN deciding TEXT;
