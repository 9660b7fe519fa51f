#!/bin/sh
# install-cli.sh installs the pinned Claude Code CLI that kz's integration
# tests drive, and prints the path of its `claude` binary on stdout (all
# other output goes to stderr). It is idempotent: an existing install of the
# pinned version is reused.
#
#   usage: runtimes/claudecode/install-cli.sh [PREFIX]
#   PREFIX defaults to $KZ_CLAUDE_PREFIX, else $HOME/.cache/kz/claude-code-<version>
#   then: KZ_CLAUDE_BIN=$(runtimes/claudecode/install-cli.sh) go test ./runtimes/claudecode/
#
# The package is a launcher plus a native binary of about 245 MB; its
# postinstall script puts the platform binary in place, so install scripts
# must run (about 15 s on a warm network).
set -eu

VERSION="${KZ_CLAUDE_VERSION:-2.1.197}"
PREFIX="${1:-${KZ_CLAUDE_PREFIX:-${HOME}/.cache/kz/claude-code-${VERSION}}}"
BIN="${PREFIX}/node_modules/.bin/claude"

installed() {
	[ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -q "^${VERSION} "
}

if ! installed; then
	command -v npm >/dev/null 2>&1 || { echo "install-cli.sh: npm is required (Node.js 18 or newer)" >&2; exit 1; }
	mkdir -p "$PREFIX"
	npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts=false \
		"@anthropic-ai/claude-code@${VERSION}" >&2
	# npm versions that hold back unapproved install scripts leave the
	# launcher without its binary: run the package's own postinstall then.
	if ! installed; then
		(cd "${PREFIX}/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2
	fi
	installed || { echo "install-cli.sh: ${BIN} does not report version ${VERSION}" >&2; exit 1; }
fi
echo "install-cli.sh: $("$BIN" --version)" >&2
echo "$BIN"
