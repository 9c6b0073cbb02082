-- The clamped times stay as they are: they are in order, which the older
-- code reads as well.
ALTER TABLE review_runs DROP CONSTRAINT IF EXISTS review_runs_times_in_order;
ALTER TABLE review_runs DROP CONSTRAINT IF EXISTS review_runs_times_per_status;
