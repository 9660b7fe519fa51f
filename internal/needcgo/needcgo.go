// Package needcgo stops a build of kz without cgo with one readable line.
//
// kz keeps its sessions in SQLite through github.com/mattn/go-sqlite3,
// which is C and builds only with cgo. Without cgo (CGO_ENABLED=0, or no C
// compiler, where the go command turns cgo off by itself) the driver's Go
// side does not compile, and the build prints a screen of undefined
// sqlite3 names that do not say why. The store imports this package
// first: the go command builds it before the store, stops there, and
// prints only the error of nocgo.go, whose undefined name is the message.
package needcgo
