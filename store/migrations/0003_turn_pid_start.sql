-- The start time of the kz process that runs a turn, next to its pid, in
-- clock ticks since boot (/proc/<pid>/stat field 22). A pid alone can be
-- reused by another process after kz dies, and kz run as pid 1 in a
-- container gets the same pid every time, so liveness compares both. 0
-- means unknown (turns started before this column, or no /proc): the pid
-- alone decides, as before.
ALTER TABLE turns ADD COLUMN pid_start INTEGER NOT NULL DEFAULT 0;
