#!/bin/sh
# Time from launching `kz --demo` in tmux to its first frame (the input
# prompt on screen), over 10 runs, next to the same harness running a bare
# printf, which is what tmux and the polling cost by themselves.
set -eu
BIN=${1:-bin/kz}
DIR=$(mktemp -d)
trap 'tmux -L kzff kill-server 2>/dev/null; rm -rf "$DIR"' EXIT
measure() {
	i=0
	while [ $i -lt 10 ]; do
		tmux -L kzff kill-server 2>/dev/null || true
		s=$(date +%s%N)
		tmux -L kzff new-session -d -x 120 -y 40 "$1"
		until tmux -L kzff capture-pane -p 2>/dev/null | grep -q "Ask kz"; do :; done
		e=$(date +%s%N)
		echo $(( (e - s) / 1000000 ))
		i=$((i + 1))
	done | sort -n | awk '{a[NR]=$1} END {printf "median %d ms (min %d, max %d)\n", a[int((NR+1)/2)], a[1], a[NR]}'
}
printf 'kz --demo first frame: '
measure "XDG_DATA_HOME=$DIR/data XDG_CONFIG_HOME=$DIR/config $BIN --demo"
printf 'harness alone (printf): '
measure "printf 'Ask kz'; sleep 5"
