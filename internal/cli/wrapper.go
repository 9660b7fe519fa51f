package cli

import ossandbox "github.com/kaizen-code/kz/tools/sandbox"

// SandboxWrapper is kz's hidden command: where bubblewrap cannot run, kz
// re-executes itself as the Landlock wrapper of each sandboxed command,
// which confines itself and then execs the command. args are os.Args;
// when they start the wrapper, SandboxWrapper runs it and returns its exit
// code with ok set. main calls it before anything else (the wrapper must
// not start what kz starts), and so must the TestMain of a package whose
// tests run kz's commands. It has no entry in the command table: no one
// types it.
func SandboxWrapper(args []string) (code int, ok bool) {
	if !ossandbox.IsWrapperInvocation(args) {
		return 0, false
	}
	return ossandbox.WrapperMain(args), true
}
