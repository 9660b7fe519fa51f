-- Sessions: one row per conversation.
CREATE TABLE IF NOT EXISTS sessions (
	id          TEXT PRIMARY KEY,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	workspace   TEXT NOT NULL DEFAULT '',
	title       TEXT NOT NULL DEFAULT '',
	runtime     TEXT NOT NULL DEFAULT '',
	model       TEXT NOT NULL DEFAULT '',
	mode        TEXT NOT NULL DEFAULT '',
	last_seq    INTEGER NOT NULL DEFAULT 0,
	turns       INTEGER NOT NULL DEFAULT 0,
	cost_usd    REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_workspace ON sessions(workspace, updated_at);
CREATE INDEX IF NOT EXISTS sessions_updated ON sessions(updated_at);

-- The append-only event log. seq is the session's sequence number.
CREATE TABLE IF NOT EXISTS events (
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	turn_id     INTEGER NOT NULL DEFAULT 0,
	type        TEXT NOT NULL,
	runtime     TEXT NOT NULL DEFAULT '',
	ts          INTEGER NOT NULL, -- unix nanoseconds
	data        TEXT NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- Turns: one row per prompt; status is NULL while the turn runs.
CREATE TABLE IF NOT EXISTS turns (
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	turn_id     INTEGER NOT NULL,
	prompt      TEXT NOT NULL DEFAULT '',
	runtime     TEXT NOT NULL DEFAULT '',
	model       TEXT NOT NULL DEFAULT '',
	status      TEXT,
	started_at  INTEGER NOT NULL,
	ended_at    INTEGER,
	pid         INTEGER NOT NULL DEFAULT 0,
	cycles      INTEGER NOT NULL DEFAULT 0,
	cost_usd    REAL NOT NULL DEFAULT 0,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, turn_id)
);
CREATE INDEX IF NOT EXISTS turns_open ON turns(status) WHERE status IS NULL;

-- The runtime-neutral transcript, folded from events by engine.TranscriptOp.
CREATE TABLE IF NOT EXISTS transcript (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	turn_id      INTEGER NOT NULL DEFAULT 0,
	kind         TEXT NOT NULL,
	runtime      TEXT NOT NULL DEFAULT '',
	model        TEXT NOT NULL DEFAULT '',
	text         TEXT NOT NULL DEFAULT '',
	tool_call_id TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT '',
	input        TEXT NOT NULL DEFAULT '',
	output       TEXT NOT NULL DEFAULT '',
	is_error     INTEGER NOT NULL DEFAULT 0,
	status       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS transcript_session ON transcript(session_id, id);
CREATE INDEX IF NOT EXISTS transcript_tool_call ON transcript(session_id, tool_call_id);

-- Each runtime's own session id, so a return to the same runtime resumes.
CREATE TABLE IF NOT EXISTS native_sessions (
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	runtime     TEXT NOT NULL,
	native_id   TEXT NOT NULL,
	turn_id     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, runtime)
);

-- Usage of each model response.
CREATE TABLE IF NOT EXISTS usage (
	session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	turn_id     INTEGER NOT NULL DEFAULT 0,
	runtime     TEXT NOT NULL DEFAULT '',
	model       TEXT NOT NULL DEFAULT '',
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd    REAL NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, seq)
);

-- Permission grants: scope 'session' rows die with their session; 'always'
-- rows have no session.
CREATE TABLE IF NOT EXISTS grants (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
	scope       TEXT NOT NULL,
	tool        TEXT NOT NULL,
	pattern     TEXT NOT NULL,
	created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS grants_unique ON grants(IFNULL(session_id, ''), scope, tool, pattern);

-- File snapshots taken before kz writes a file, for undo. Content is never
-- redacted: undo must restore the exact bytes.
CREATE TABLE IF NOT EXISTS snapshots (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id  TEXT NOT NULL DEFAULT '',
	change_id   TEXT NOT NULL,
	tool_call_id TEXT NOT NULL DEFAULT '',
	path        TEXT NOT NULL,
	existed     INTEGER NOT NULL,
	content     BLOB,
	mode        INTEGER NOT NULL DEFAULT 0,
	-- What the change left, so undo can refuse when the file changed since.
	after_exists INTEGER NOT NULL DEFAULT 0,
	after_sha256 TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshots_change ON snapshots(change_id);
CREATE INDEX IF NOT EXISTS snapshots_session ON snapshots(session_id, id);

-- Tool results too large for the model, kept whole.
CREATE TABLE IF NOT EXISTS artifacts (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id   TEXT NOT NULL DEFAULT '',
	tool_call_id TEXT NOT NULL DEFAULT '',
	content      BLOB NOT NULL,
	created_at   INTEGER NOT NULL
);
