#!/bin/sh
# Whole-process timings of kz (median of many runs): `kz version` and the
# scripted hello `kz -p`. /bin/true is timed the same way as a reference:
# on a machine shared with other work every process start is slower, and
# the reference shows by how much. Uses hyperfine when installed (no shell
# in between), else a shell loop whose own cost is the reference's time.
set -eu
BIN=${1:-bin/kz}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export XDG_DATA_HOME="$DIR/data" XDG_CONFIG_HOME="$DIR/config"
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/scripts/hello.jsonl
HELLO="$BIN -p hi --runtime scripted --script $SCRIPT"
RUNS=${RUNS:-50}
if command -v hyperfine >/dev/null 2>&1; then
	hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$DIR/times.json" \
		-n "/bin/true (reference)" /bin/true -n "kz version" "$BIN version" -n "kz -p hello (scripted)" "$HELLO"
	# hyperfine prints means; the figures are medians.
	awk -F'"' '/"command":/ {name=$4} /"median":/ {v=$3; gsub(/[:, ]/, "", v); printf "%s: median %.2f ms over '"$RUNS"' runs\n", name, v*1000}' "$DIR/times.json"
	exit 0
fi
median() {
	runs=$1; shift
	i=0
	while [ $i -lt "$runs" ]; do
		s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
		echo $(( (e - s) / 1000 ))
		i=$((i + 1))
	done | sort -n | awk '{a[NR]=$1} END {printf "median %.2f ms over %d runs\n", a[int((NR+1)/2)]/1000, NR}'
}
printf '/bin/true (reference, includes the loop): '; median "$RUNS" /bin/true
printf 'kz version: '; median "$RUNS" $BIN version
printf 'kz -p hello (scripted): '; median "$RUNS" $HELLO
