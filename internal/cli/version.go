package cli

import (
	"context"
	"fmt"
	"runtime"
)

// cmdVersion prints kz's version; kz --version is the same.
var cmdVersion = &Command{
	Name:      "version",
	UsageLine: "kz version",
	Short:     []Usage{{"kz version", ""}},
	Long:      "kz version (or kz --version) prints kz's version, the Go release it was\nbuilt with, and the system it runs on.\n",
	Run:       runVersion,
}

func runVersion(_ context.Context, inv *Invocation, args []string) error {
	if len(args) > 0 {
		return usagef("kz %s takes no arguments", inv.Name)
	}
	_, _ = fmt.Fprintf(inv.Stdout, "kz %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
