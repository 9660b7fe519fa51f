-- Checkpoints: what every tool call of any runtime changed in the
-- workspace, so that kz undo and /rewind can put files back whichever
-- runtime or shell command changed them. (Version 5 is left to the
-- subagent sessions being added alongside; versions need not be dense.)

-- File content by its SHA-256, stored once however many checkpoints or
-- baselines name it. Content is never redacted: a restore must put back
-- the exact bytes.
CREATE TABLE IF NOT EXISTS blobs (
	sha256      TEXT PRIMARY KEY,
	content     BLOB NOT NULL,
	created_at  INTEGER NOT NULL
);

-- The last known state of each non-ignored file of a workspace, kept up to
-- date by the scan after every tool call: the state a file had before a
-- call that no prediction covered. sha256 is '' for a file whose content
-- is not kept (over the size cap).
CREATE TABLE IF NOT EXISTS file_baseline (
	workspace   TEXT NOT NULL,
	path        TEXT NOT NULL,
	size        INTEGER NOT NULL,
	mtime_ns    INTEGER NOT NULL,
	ctime_ns    INTEGER NOT NULL,
	ino         INTEGER NOT NULL,
	mode        INTEGER NOT NULL,
	sha256      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (workspace, path)
) WITHOUT ROWID;

-- One checkpoint per tool call that changed files (tool_call_id '' for the
-- changes found at the end of a turn that no call accounts for), linked to
-- its session and turn. undone_at is set when undo or /rewind put its
-- files back; the row stays.
CREATE TABLE IF NOT EXISTS checkpoints (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id   TEXT NOT NULL,
	turn_id      INTEGER NOT NULL,
	tool_call_id TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT '',
	runtime      TEXT NOT NULL DEFAULT '',
	workspace    TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	undone_at    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS checkpoints_session ON checkpoints(session_id, id);

-- Each file a checkpoint saw change: its state before (a blob, or none
-- when it did not exist or was over the cap: restorable = 0) and after.
CREATE TABLE IF NOT EXISTS checkpoint_files (
	checkpoint_id INTEGER NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE,
	path          TEXT NOT NULL,
	before_exists INTEGER NOT NULL,
	before_sha256 TEXT NOT NULL DEFAULT '',
	before_mode   INTEGER NOT NULL DEFAULT 0,
	after_exists  INTEGER NOT NULL,
	after_sha256  TEXT NOT NULL DEFAULT '',
	after_size    INTEGER NOT NULL DEFAULT 0,
	restorable    INTEGER NOT NULL,
	PRIMARY KEY (checkpoint_id, path)
);
