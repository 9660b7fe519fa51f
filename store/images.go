package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kaizen-code/kz/engine"
)

// Images attached to user messages live in the artifacts table, one row
// per image of a message (tool_call_id "image:<sha256>"), written
// in the same transaction as the user_message that carries them. The
// event's JSON keeps only each image's description and its "artifact:N"
// reference, so reading the events table never reads image bytes, and
// loading a session's transcript puts the bytes back (imagesInto) for the
// runtime that resumes it.

// imageKey is the artifacts.tool_call_id of an image.
func imageKey(sha string) string { return "image:" + sha }

// storeImages saves the bytes of ev's images that have not been saved
// yet and returns the images with their references set, for the event's
// payload. The caller's slice is not changed: the event the session holds
// (and its subscribers see) is the caller's.
func storeImages(ctx context.Context, bt *batchTx, ev *engine.Event) ([]engine.Image, error) {
	out := make([]engine.Image, len(ev.Images))
	copy(out, ev.Images)
	saved := map[string]string{}
	for i := range out {
		im := &out[i]
		if im.Ref != "" || len(im.Data) == 0 {
			continue
		}
		if ref, ok := saved[im.SHA256]; ok {
			im.Ref = ref
			continue
		}
		ref, err := bt.saveImage(ctx, ev.SessionID, im)
		if err != nil {
			return nil, fmt.Errorf("save image %s: %w", im.Name, err)
		}
		im.Ref, saved[im.SHA256] = ref, ref
	}
	return out, nil
}

// saveImage writes one image's bytes, exactly (never redacted: a
// redaction would corrupt them). Each message keeps its own copy: the
// artifacts table has no index by session that would make finding an
// earlier copy cheap, and a person rarely sends the same image twice.
func (bt *batchTx) saveImage(ctx context.Context, session string, im *engine.Image) (string, error) {
	r, err := exec(ctx, bt, `INSERT INTO artifacts(session_id, tool_call_id, content, created_at) VALUES (?,?,?,?)`,
		session, imageKey(im.SHA256), exactBytes(im.Data), time.Now().UnixMilli())
	if err != nil {
		return "", err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return "", err
	}
	return "artifact:" + strconv.FormatInt(id, 10), nil
}

// stmt returns the batch's prepared statement for query.
func (bt *batchTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, ok := bt.stmts[query]
	if !ok {
		var err error
		if st, err = bt.prepare(ctx, query); err != nil {
			return nil, err
		}
		bt.stmts[query] = st
	}
	return st, nil
}

// imagesInto puts the images of a session's user messages, bytes
// included, into the user entries of its transcript. Each user entry's
// event is one primary-key lookup, and only the events that name images
// are decoded.
func (s *Store) imagesInto(ctx context.Context, id string, entries []engine.TranscriptEntry) error {
	var st *sql.Stmt
	defer func() {
		if st != nil {
			_ = st.Close()
		}
	}()
	for i := range entries {
		e := &entries[i]
		if e.Kind != engine.EntryUser {
			continue
		}
		if st == nil {
			var err error
			if st, err = s.db.PrepareContext(ctx, `SELECT data FROM events WHERE session_id = ? AND seq = ? AND type = ? AND instr(data, '"images":') > 0`); err != nil {
				return fmt.Errorf("read images of %s: %w", id, err)
			}
		}
		var data []byte
		switch err := st.QueryRowContext(ctx, id, e.Seq, string(engine.EventUserMessage)).Scan(&data); {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return fmt.Errorf("read images of %s: %w", id, err)
		}
		var ev struct {
			Images []engine.Image `json:"images"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("read images of %s: event %d: %w", id, e.Seq, err)
		}
		for j := range ev.Images {
			b, err := s.imageBytes(ctx, id, ev.Images[j].Ref)
			if err != nil {
				return fmt.Errorf("read image %s of %s: %w", ev.Images[j].Name, id, err)
			}
			ev.Images[j].Data = b
		}
		e.Images = ev.Images
	}
	return nil
}

// imageBytes reads an image's bytes by reference, within its session.
func (s *Store) imageBytes(ctx context.Context, session, ref string) ([]byte, error) {
	n, ok := strings.CutPrefix(ref, "artifact:")
	id, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil {
		return nil, fmt.Errorf("%q is not an artifact reference", ref)
	}
	var b []byte
	if err := s.db.QueryRowContext(ctx, `SELECT content FROM artifacts WHERE id = ? AND session_id = ?`, id, session).Scan(&b); err != nil {
		return nil, err
	}
	return b, nil
}
