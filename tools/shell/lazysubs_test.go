package shell

import (
	"reflect"
	"sync"
	"testing"
)

// Every sub-command with options has its model, built on first use, the
// same whichever goroutine builds it first and however many ask at once.
func TestLazyGitSubModels(t *testing.T) {
	fresh := func() *Model {
		m := &Model{name: "git", subs: map[string]*Model{}}
		lazyGitSubs(m)
		return m
	}
	want := fresh()
	got := fresh()
	var wg sync.WaitGroup
	for range 8 {
		for sub := range got.lazySubs {
			wg.Go(func() { got.subModel(sub) })
		}
	}
	wg.Wait()
	for sub, specs := range gitOptionSpecs() {
		if len(specs) == 0 {
			continue
		}
		sm, ok := got.subModel(sub)
		if !ok || sm == nil || sm.name != sub {
			t.Fatalf("git %s: model %v, known %v", sub, sm, ok)
		}
		w, _ := want.subModel(sub)
		if !reflect.DeepEqual(sm, w) {
			t.Errorf("git %s: the model built concurrently differs from one built alone", sub)
		}
		if again, _ := got.subModel(sub); again != sm {
			t.Errorf("git %s: built twice", sub)
		}
	}
	for _, sub := range []string{"whatchanged", "annotate", "show", "version", "stash", "worktree", "reflog", "remote"} {
		if sm, ok := got.subModel(sub); !ok || sm == nil {
			t.Errorf("git %s: no model", sub)
		}
	}
	if sm, ok := got.subModel("no-such-sub"); ok || sm != nil {
		t.Errorf("an unknown sub-command has a model: %v", sm)
	}
}

// A sub-command's options are known as they were when every model was
// built at once: abbreviations, negations, the aliases' borrowed options.
func TestLazyGitSubModelsParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"log", "--max-count=3"}, "--max-count"},
		{[]string{"commit", "--no-verify"}, "--no-verify"},
		{[]string{"commit", "--amen"}, "--amend"},
		{[]string{"whatchanged", "--stat"}, "--stat"},
		{[]string{"annotate", "--contents", "f"}, "--contents"},
		{[]string{"show", "--format=%H"}, "--format"},
		{[]string{"stash", "--keep-index"}, "--keep-index"},
		{[]string{"version", "--build-options"}, "--build-options"},
	} {
		p := ParseArgs("git", c.args, nil)
		if !p.Model || !p.Has(c.flag) {
			t.Errorf("git %v: model %v, flags %+v; want %s", c.args, p.Model, p.Flags, c.flag)
		}
	}
}
