-- A subagent's session names the session that spawned it and the parent's
-- tool call that did, so kz sessions lists children under their parent
-- and the parent's history leads to each child's. Both are empty for a
-- session the person started.
ALTER TABLE sessions ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN parent_tool_call_id TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_id) WHERE parent_id != '';
