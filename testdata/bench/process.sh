#!/bin/sh
# Whole-process timings of kz (median of many runs): `kz version` and the
# scripted hello `kz -p`. Uses hyperfine when installed, else a shell loop.
set -eu
BIN=${1:-bin/kz}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export XDG_DATA_HOME="$DIR/data" XDG_CONFIG_HOME="$DIR/config"
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/scripts/hello.jsonl
HELLO="$BIN -p hi --runtime scripted --script $SCRIPT"
if command -v hyperfine >/dev/null 2>&1; then
	hyperfine -N --warmup 5 --runs 50 "$BIN version" "$HELLO"
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
printf 'kz version: '; median 50 $BIN version
printf 'kz -p hello (scripted): '; median 50 $HELLO
