#!/bin/sh
# install-cli.sh installs the pinned Codex CLI that kz's integration tests
# drive, and prints the path of its native `codex` binary on stdout (all
# other output goes to stderr). It is idempotent: an existing install of the
# pinned version is reused.
#
#   usage: runtimes/codex/install-cli.sh [PREFIX]
#   PREFIX defaults to $KZ_CODEX_PREFIX, else <repo>/.cache/codex-<version>
#   (git-ignored)
#   then: KZ_CODEX_BIN=$(runtimes/codex/install-cli.sh) go test ./runtimes/codex/
#
# npm also installs the optional platform package holding the native musl
# binary (about 294 MB); there is no postinstall download. The binary is
# used directly: bin/codex.js is only a launcher.
set -eu

VERSION="${KZ_CODEX_VERSION:-0.169.0}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PREFIX="${1:-${KZ_CODEX_PREFIX:-${ROOT}/.cache/codex-${VERSION}}}"
PKG="${PREFIX}/node_modules/@openai/codex"

native() {
	for b in "${PREFIX}"/node_modules/@openai/codex-*/vendor/*/bin/codex "${PKG}"/vendor/*/bin/codex "${PKG}"/node_modules/@openai/codex-*/vendor/*/bin/codex; do
		if [ -x "$b" ]; then
			echo "$b"
			return 0
		fi
	done
	return 1
}

installed() {
	b="$(native)" && "$b" --version 2>/dev/null | grep -q " ${VERSION}\$"
}

if ! installed; then
	command -v npm >/dev/null 2>&1 || { echo "install-cli.sh: npm is required (Node.js 18 or newer)" >&2; exit 1; }
	mkdir -p "$PREFIX"
	npm install --prefix "$PREFIX" --no-audit --no-fund "@openai/codex@${VERSION}" >&2
	installed || { echo "install-cli.sh: no native codex ${VERSION} binary under ${PREFIX}" >&2; exit 1; }
fi
BIN="$(native)"
echo "install-cli.sh: $("$BIN" --version)" >&2
echo "$BIN"
