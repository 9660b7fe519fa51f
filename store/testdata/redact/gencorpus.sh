#!/usr/bin/env bash
# gencorpus.sh rebuilds gitleaks-corpus.json: the true and false positives
# that gitleaks' rule generators (cmd/generate/config/rules, MIT licensed)
# validate each rule against. It copies the gitleaks module of the version
# store/redactrules/VERSION names from the Go module cache, makes its
# Validate functions record their samples, and runs the generator, which
# also writes the rules TOML: the script checks it equals the embedded one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(cat "$here/../../redactrules/VERSION")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && go mod init tmp >/dev/null 2>&1 && go mod download -json "github.com/zricethezav/gitleaks/v8@$version" >/dev/null)
src=$(go env GOMODCACHE)/github.com/zricethezav/gitleaks/v8@$version
cp -r "$src" "$work/gitleaks" && chmod -R u+w "$work/gitleaks"
cd "$work/gitleaks"
cat > cmd/generate/config/utils/record.go <<'GO'
package utils

import (
	"encoding/json"
	"os"
)

// record appends one rule's samples to $KZ_CORPUS_OUT as a JSON line.
func record(id string, tps, fps []string, pathTPs, pathFPs map[string]string) {
	f, err := os.OpenFile(os.Getenv("KZ_CORPUS_OUT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	_ = json.NewEncoder(f).Encode(map[string]any{"id": id, "tps": tps, "fps": fps, "path_tps": pathTPs, "path_fps": pathFPs})
}
GO
sed -i 's|^\tr := &rule$|\tr := \&rule\n\trecord(rule.RuleID, truePositives, falsePositives, nil, nil)|' cmd/generate/config/utils/validate.go
grep -q 'record(rule.RuleID, truePositives, falsePositives, nil, nil)' cmd/generate/config/utils/validate.go
perl -0pi -e 's/(func ValidateWithPaths\(rule config.Rule, truePositives map\[string\]string, falsePositives map\[string\]string\) \*config.Rule \{\n\tr := &rule)\n\trecord\(rule.RuleID, truePositives, falsePositives, nil, nil\)/$1\n\trecord(rule.RuleID, nil, nil, truePositives, falsePositives)/' cmd/generate/config/utils/validate.go
grep -q 'record(rule.RuleID, nil, nil, truePositives, falsePositives)' cmd/generate/config/utils/validate.go
export KZ_CORPUS_OUT="$work/corpus.jsonl"
(cd cmd/generate/config && go run . "$work/gitleaks.toml")
cmp "$work/gitleaks.toml" "$here/../../redactrules/gitleaks.toml"
mkdir -p "$work/merge"
cat > "$work/merge/main.go" <<'GO'
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	var cases []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c map[string]any
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			panic(err)
		}
		cases = append(cases, c)
	}
	sort.SliceStable(cases, func(i, j int) bool { return cases[i]["id"].(string) < cases[j]["id"].(string) })
	out := map[string]any{
		"source":  "github.com/zricethezav/gitleaks/v8@" + os.Args[2] + " cmd/generate/config/rules (MIT License, Copyright (c) 2019 Zachary Rice; see LICENSE.gitleaks)",
		"version": os.Args[2],
		"rules":   cases,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
GO
(cd "$work/merge" && go mod init merge >/dev/null 2>&1 && go run . "$KZ_CORPUS_OUT" "$version") > "$here/gitleaks-corpus.json"
