package cli

import (
	"context"
)

// cmdSetup opens the TUI on its setup screen.
var cmdSetup = &Command{
	Name:      "setup",
	UsageLine: "kz setup [flags]",
	Short:     []Usage{{"kz setup", "set up the default runtime: provider, key, model"}},
	Long: `kz setup opens kz on its setup screen, which kz also opens by itself when
no runtime is available (and /setup inside kz): pick an API provider
(Anthropic, OpenAI, OpenRouter, Ollama, Gemini) or an agent CLI that is
logged in, paste the key or name the variable that holds it, pick a model,
test the connection, and save. A pasted key is kept in
$XDG_CONFIG_HOME/kz/keys/NAME.key with mode 0600 and named by api_key_file
in the user config; it never reaches the transcript, the session history,
the log or config.toml. The user config is edited, not rewritten: its
comments and other settings stay. kz then opens the session on the new
runtime. The flags are those of kz.
`,
	Run: runSetup,
}

func runSetup(ctx context.Context, inv *Invocation, args []string) error {
	o, err := parseRoot(args)
	if err != nil {
		return err
	}
	if o.prompt != "" || o.demo {
		return usagef("kz setup is interactive: it takes neither -p nor --demo")
	}
	return runSessionLoop(ctx, inv, args, sessionExtras{setup: true})
}
