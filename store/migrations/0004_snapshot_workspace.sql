-- The folder a change was applied in, and the directories it created, kept
-- with each snapshot. A session can be resumed in another folder than the
-- one it started in, so undo must restore a change where it was applied,
-- not in the session's first folder; and undo removes the directories a
-- change created for its new files once they are empty again, but never
-- one that was there before.
ALTER TABLE snapshots ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
ALTER TABLE snapshots ADD COLUMN created_dirs TEXT NOT NULL DEFAULT '';

-- Snapshots taken before this migration name no folder: the session's
-- folder is the best that is known (and the one undo used until now).
UPDATE snapshots SET workspace = IFNULL((SELECT workspace FROM sessions WHERE sessions.id = snapshots.session_id), '')
	WHERE workspace = '';

-- kz undo without a session id looks for the newest change of its folder.
CREATE INDEX IF NOT EXISTS snapshots_workspace ON snapshots(workspace, id);
