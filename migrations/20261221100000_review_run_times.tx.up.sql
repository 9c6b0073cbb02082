-- review_runs keeps a run's times as domain/review's loader
-- (UnmarshalRunFromDatabase) requires them, so every stored run loads.
--
-- Before the loader checked them, the service could store times out of
-- order: a run is created on the API replica's clock and started and
-- finished on a worker's, so a worker whose clock was behind stored a
-- start before the creation, and a failure on another worker (the last
-- attempt's callback) a finish before the start. Such a row no longer
-- loads: a page listing it fails as a whole, and a run that does not load
-- is never failed. Each is clamped, as the domain clamps a transition
-- given a time before the run's latest: the start to the creation, the
-- finish to the start (or the creation, for a run that never started).
--
-- The table's owner sees the rows only through the system policy, which
-- app.system opens for this transaction.
SELECT set_config('app.system', 'on', true);

UPDATE review_runs SET started_at = created_at
    WHERE started_at < created_at;
UPDATE review_runs SET finished_at = greatest(started_at, created_at)
    WHERE finished_at < greatest(started_at, created_at);

-- The times each status has (queued: neither a start nor a finish;
-- running: a start and no finish; done: both; failed: a finish, and a
-- start when it ran) and their order (created ≤ started ≤ finished): the
-- loader's checkTimes, which adapters/postgres's
-- TestReviewRunChecksAreTheLoaders holds these to. The service never
-- wrote a status without its times (a start was stored with the running
-- status, a finish with the done or failed one), so no row is changed
-- for them.
ALTER TABLE review_runs
    ADD CONSTRAINT review_runs_times_per_status CHECK (
        CASE status
            WHEN 'queued' THEN started_at IS NULL AND finished_at IS NULL
            WHEN 'running' THEN started_at IS NOT NULL AND finished_at IS NULL
            WHEN 'done' THEN started_at IS NOT NULL AND finished_at IS NOT NULL
            WHEN 'failed' THEN finished_at IS NOT NULL
            ELSE false
        END),
    ADD CONSTRAINT review_runs_times_in_order CHECK (
        (started_at IS NULL OR started_at >= created_at)
        AND (finished_at IS NULL OR finished_at >= greatest(started_at, created_at)));
