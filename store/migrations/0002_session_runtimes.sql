-- Every runtime a session ran turns on, comma-separated in order of first
-- use, kept on the session row so that listing sessions reads one row per
-- session and no per-turn join. The writer appends a runtime the first time a
-- turn of the session starts or ends on it.
ALTER TABLE sessions ADD COLUMN runtimes TEXT NOT NULL DEFAULT '';

-- Backfill from the turns already stored (the primary key index on turns
-- serves the per-session lookup), falling back to the latest runtime.
UPDATE sessions SET runtimes = COALESCE(
	(SELECT group_concat(runtime, ',') FROM (
		SELECT runtime, MIN(turn_id) AS first FROM turns
		WHERE turns.session_id = sessions.id AND runtime != ''
		GROUP BY runtime ORDER BY first)),
	runtime);
