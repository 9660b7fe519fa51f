package main

import (
	"flag"
	"log"
	"net/http"
	"os"
)

type config struct {
	addr    string
	root    string
	verbose bool
}

func parseFlags() config {
	var c config
	flag.StringVar(&c.addr, "addr", ":8080", "listen address")
	flag.StringVar(&c.root, "root", ".", "directory to serve")
	flag.BoolVar(&c.verbose, "v", false, "log every request")
	flag.Parse()
	return c
}

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s", r.Method, r.URL.Path)
		next.ServeHTTP(w, r)
	})
}

func main() {
	c := parseFlags()
	if _, err := os.Stat(c.root); err != nil {
		log.Fatalf("root: %v", err)
	}
	var h http.Handler = http.FileServer(http.Dir(c.root))
	if c.verbose {
		h = logRequests(h)
	}
	log.Printf("serving %s on %s", c.root, c.addr)
	if err := http.ListenAndServe(c.addr, h); err != nil {
		log.Fatal(err)
	}
}
