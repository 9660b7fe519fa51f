//go:build !cgo

package needcgo

// The undefined name below is the message a build without cgo prints.
var _ = kz_needs_cgo_for_mattn_go_sqlite3__install_a_C_compiler_such_as_gcc_and_build_with_CGO_ENABLED_1
