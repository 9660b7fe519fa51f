package readability

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on its first use (kz fork).
// Upstream compiled the parser's two dozen expressions in package
// initialisation, which cost every kz process about 0.35 ms before main,
// though only a web fetch ever uses them. It has the methods of
// *regexp.Regexp that the parser calls; get returns the compiled one.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func newLazyRegexp(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRegexp) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRegexp) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }

func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}

func (l *lazyRegexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return l.get().ReplaceAllStringFunc(src, repl)
}

func (l *lazyRegexp) Split(s string, n int) []string { return l.get().Split(s, n) }
