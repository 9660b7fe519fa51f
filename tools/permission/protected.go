package permission

// The one list of the names kz protects. The gate refuses writes to them
// (paths.go) and the OS sandbox (tools/sandbox) mounts them read-only or
// hides them, so that what the gate claims and what the kernel enforces
// never drift apart: a name added here is protected by both.

import (
	"path/filepath"
	"slices"
	"strings"
)

// Protected file names, by category. Names are compared in lower case:
// on case-insensitive file systems `.GIT/config` is `.git/config`.
var (
	agentDirs = map[string]bool{".claude": true, ".codex": true, ".gemini": true, ".cursor": true, ".vscode": true,
		".windsurf": true, ".continue": true, ".aider": true, ".github-copilot": true}
	agentFiles = map[string]bool{".mcp.json": true, ".claude.json": true, ".cursorrules": true, ".aider.conf.yml": true}
	rcFiles    = map[string]bool{".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true,
		".profile": true, ".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true, ".zlogout": true,
		".cshrc": true, ".tcshrc": true, ".kshrc": true, ".inputrc": true, ".envrc": true, ".login": true, ".mkshrc": true}
	credDirs = map[string]bool{".ssh": true, ".aws": true, ".gnupg": true, ".docker": true, ".kube": true, ".azure": true, ".gcloud": true,
		".password-store": true}
	credFiles = map[string]bool{".netrc": true, ".npmrc": true, ".pypirc": true, ".git-credentials": true, ".pgpass": true,
		"credentials.json": true, ".htpasswd": true, ".envrc": true}
)

// credSuffixes and credPrefixes complete credFiles: key and certificate
// stores, and SSH private keys whatever their suffix.
var (
	credSuffixes = []string{".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".p8", ".ppk"}
	credPrefixes = []string{"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"}
)

// homeCredentials are the files and directories under the home directory
// that hold credentials besides the credDirs and credFiles names found
// directly in it: tools that keep their tokens under ~/.config, the agent
// CLIs' own login files, and shell histories (typed secrets end up there).
var homeCredentials = []string{
	".config/gh", ".config/hub", ".config/gcloud", ".config/doctl", ".config/op", ".config/git/credentials",
	".config/rclone", ".config/github-copilot", ".config/configstore",
	".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".gemini/google_accounts.json",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".terraform.d/credentials.tfrc.json",
	".vault-token", ".password-store", ".local/share/keyrings", ".s3cfg", ".boto", ".oci", ".yarnrc.yml",
	".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".node_repl_history",
}

// isCredential reports whether a base name looks like a secret.
func isCredential(base string) bool {
	if credFiles[base] || base == ".env" || strings.HasPrefix(base, ".env.") {
		return true
	}
	for _, suf := range credSuffixes {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	for _, pre := range credPrefixes {
		if strings.HasPrefix(base, pre) {
			return true
		}
	}
	return false
}

// IsProtectedName reports whether a file or directory with this base name
// is protected wherever it is: a `.git` (directory or file), kz's `.kz`,
// an agent's configuration directory or file, a shell startup file.
// Writes to it and below it are refused by the gate; the sandbox keeps it
// read-only inside a writable workspace.
func IsProtectedName(base string) bool {
	b := strings.ToLower(base)
	return b == ".git" || b == ".kz" || agentDirs[b] || agentFiles[b] || rcFiles[b]
}

// IsCredentialName reports whether a file or directory with this base name
// holds credentials: a credential directory (.ssh, .aws, …), a credential
// file (.netrc, .npmrc, …), a dotenv file, a key or certificate store, an
// SSH private key.
func IsCredentialName(base string) bool {
	b := strings.ToLower(base)
	return credDirs[b] || isCredential(b)
}

// IsHomeCredential reports whether the clean absolute path p is one of the
// home's credential files (HomeCredentialPaths) or lies below one.
func IsHomeCredential(home, p string) bool {
	if home == "" {
		return false
	}
	for _, rel := range HomeCredentialPaths() {
		if below(filepath.Join(home, rel), p) {
			return true
		}
	}
	return false
}

// IsCredentialPath reports whether a slash path names a credential file
// or lies in a credential directory, by its names alone (the home's
// credential files that only their place names are HomeCredentialPaths).
// It does not allocate for lower-case names: it runs for every file a
// checkpoint scan meets.
func IsCredentialPath(p string) bool {
	for p != "" {
		var c string
		c, p, _ = strings.Cut(p, "/")
		if c == "" {
			continue
		}
		c = lowerASCII(c)
		if credDirs[c] {
			return true
		}
		if p == "" {
			return isCredential(c)
		}
	}
	return false
}

// lowerASCII is strings.ToLower for a name with no upper-case ASCII
// letter, without the copy.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

// IsCredentialDir reports whether a directory with this base name holds
// credentials (.ssh, .aws, .gnupg, …): everything below it is a secret.
func IsCredentialDir(base string) bool { return credDirs[strings.ToLower(base)] }

// HomeCredentialPaths returns the paths, relative to the home directory,
// of every credential file and directory kz knows of there: the
// credential directory and file names directly in the home, and the
// longer paths of homeCredentials. The sandbox hides each of them.
func HomeCredentialPaths() []string {
	out := make([]string, 0, len(credDirs)+len(credFiles)+len(homeCredentials))
	for n := range credDirs {
		out = append(out, n)
	}
	for n := range credFiles {
		out = append(out, n)
	}
	out = append(out, homeCredentials...)
	slices.Sort(out)
	return slices.Compact(out)
}
