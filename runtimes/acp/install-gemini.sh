#!/bin/sh
# install-gemini.sh installs the pinned Gemini CLI that kz's ACP
# integration tests drive, and prints the path of its `gemini` executable on
# stdout (all other output goes to stderr). It is idempotent: an existing
# install of the pinned version is reused.
#
#   usage: runtimes/acp/install-gemini.sh [PREFIX]
#   PREFIX defaults to $KZ_GEMINI_PREFIX, else <repo>/.cache/gemini-cli-<version>
#   (git-ignored)
#   then: KZ_GEMINI_BIN=$(runtimes/acp/install-gemini.sh) go test ./runtimes/acp/
#
# Needs Node.js 20 or newer. npm warns that the install scripts of
# @github/keytar and node-pty did not run; the prebuilt node-pty is used
# and nothing breaks (protocol notes §1).
set -eu

VERSION="${KZ_GEMINI_VERSION:-0.61.0}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PREFIX="${1:-${KZ_GEMINI_PREFIX:-${ROOT}/.cache/gemini-cli-${VERSION}}}"
BIN="${PREFIX}/node_modules/.bin/gemini"

installed() {
	[ -x "$BIN" ] && [ "$(GEMINI_CLI_NO_RELAUNCH=true "$BIN" --version 2>/dev/null | tail -n 1)" = "$VERSION" ]
}

if ! installed; then
	command -v npm >/dev/null 2>&1 || { echo "install-gemini.sh: npm is required (Node.js 20 or newer)" >&2; exit 1; }
	mkdir -p "$PREFIX"
	npm install --prefix "$PREFIX" --no-audit --no-fund "@google/gemini-cli@${VERSION}" >&2
	installed || { echo "install-gemini.sh: ${BIN} does not report version ${VERSION}" >&2; exit 1; }
fi
echo "install-gemini.sh: gemini $(GEMINI_CLI_NO_RELAUNCH=true "$BIN" --version 2>/dev/null | tail -n 1)" >&2
echo "$BIN"
