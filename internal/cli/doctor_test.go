package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorChecksSalvagesAndRefusesWhileInUse: kz doctor reports a sound
// database with exit 0 and a damaged one with exit 1 and SQLite's
// findings, changing nothing; --salvage copies what can be read into a
// fresh database (exit 0) after which the check passes; and a salvage
// while another kz has the database open is refused.
func TestDoctorChecksSalvagesAndRefusesWhileInUse(t *testing.T) {
	sb := newSandbox(t)
	data := filepath.Join(sb.data, "kz")
	db := filepath.Join(data, "kz.db")
	if out, errOut, code := sb.kz("doctor"); code != 0 || !strings.Contains(out, "does not exist yet") {
		t.Fatalf("no database: exit %d %s %s", code, out, errOut)
	}
	// Enough sessions with large tool outputs to fill a few hundred pages.
	var sc strings.Builder
	sc.WriteString(`{"type":"session_started"}` + "\n")
	for i := range 20 {
		fmt.Fprintf(&sc, `{"type":"tool_call_started","tool_call_id":"c%d","tool":"read_file","input":{"path":"a.go"}}`+"\n", i)
		fmt.Fprintf(&sc, `{"type":"tool_call_finished","tool_call_id":"c%d","tool":"read_file","output":%q}`+"\n", i, strings.Repeat(fmt.Sprintf("line %d\n", i), 800))
	}
	sc.WriteString(`{"type":"assistant_message","text":"done"}` + "\n")
	script := filepath.Join(sb.workspace, "big.jsonl")
	writeFile(t, script, sc.String())
	for range 6 {
		if _, errOut, code := sb.kz("-p", "read", "--script", script); code != 0 {
			t.Fatalf("kz -p: exit %d %s", code, errOut)
		}
	}
	out, errOut, code := sb.kz("doctor")
	if code != 0 || !strings.Contains(out, "integrity: ok") || !strings.Contains(out, "sessions: 6,") {
		t.Fatalf("sound database: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := sb.kz("doctor", "--salvage"); code != 0 || !strings.Contains(out, "nothing to salvage") {
		t.Fatalf("salvage of a sound database: exit %d\n%s", code, out)
	}

	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2 / 4096 * 4096; i < len(b)*3/4; i++ {
		b[i] = 0x5a
	}
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = sb.kz("doctor")
	if code != 1 || !strings.Contains(out, "integrity: damaged") || !strings.Contains(out, "kz doctor --salvage copies") {
		t.Fatalf("damaged database: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(db); string(after) != string(b) {
		t.Fatal("kz doctor changed the database")
	}
	out, errOut, code = sb.kz("doctor", "--salvage")
	if code != 0 || !strings.Contains(out, "recovered ") || !strings.Contains(out, "kept as "+db+".corrupt-") {
		t.Fatalf("salvage: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("kz doctor --salvage:\n%s", out)
	if out, _, code := sb.kz("doctor"); code != 0 || !strings.Contains(out, "integrity: ok") {
		t.Fatalf("after the salvage: exit %d\n%s", code, out)
	}

	// Another kz holds the database: the salvage is refused, whatever
	// an earlier kz found.
	sb.startHolder()
	writeFile(t, db+".damaged", "database disk image is malformed\n")
	out, errOut, code = sb.kz("doctor", "--salvage")
	if code != 1 || !strings.Contains(errOut, "another kz is using the database") || !strings.Contains(out, "an earlier kz found damage") {
		t.Fatalf("salvage beside a running kz: exit %d\n%s%s", code, out, errOut)
	}
}
