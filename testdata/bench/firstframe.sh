#!/bin/sh
# Time from launching `kz --demo` in tmux to its first frame (the input
# prompt on screen), over 10 runs, next to the same harness running a bare
# printf, which is what tmux and the polling cost by themselves. kz's own
# share (the figure held to 50 ms) is the difference of the medians.
set -eu
BIN=${1:-bin/kz}
DIR=$(mktemp -d)
SOCK=kzff-$$
trap 'for i in 0 1 2 3 4 5 6 7 8 9; do tmux -L "$SOCK-$i" kill-server 2>/dev/null || true; done; rm -rf "$DIR"' EXIT
# measure prints the median of 10 runs in ms. Each run gets a fresh tmux
# server, started before the clock, so only the pane's command is timed.
measure() {
	i=0
	while [ $i -lt 10 ]; do
		sock=$SOCK-$i
		tmux -L "$sock" new-session -d -x 120 -y 40 -s idle "sleep 60"
		s=$(date +%s%N)
		tmux -L "$sock" new-window -d -t idle -n run "$1"
		until tmux -L "$sock" capture-pane -p -t idle:run 2>/dev/null | grep -q "Ask kz"; do :; done
		e=$(date +%s%N)
		tmux -L "$sock" kill-server 2>/dev/null || true
		echo $(( (e - s) / 1000000 ))
		i=$((i + 1))
	done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}'
}
set -- "$(measure "XDG_DATA_HOME=$DIR/data XDG_CONFIG_HOME=$DIR/config $BIN --demo")" "$(measure "printf 'Ask kz'; sleep 5")"
echo "kz --demo first frame: median $(echo "$1" | awk '{printf "%d ms (min %d, max %d)", $1, $2, $3}')"
echo "harness alone (printf): median $(echo "$2" | awk '{printf "%d ms (min %d, max %d)", $1, $2, $3}')"
echo "kz's share: $(( ${1%% *} - ${2%% *} )) ms (target 50 ms)"
