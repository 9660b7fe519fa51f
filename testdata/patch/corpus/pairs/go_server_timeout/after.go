package main

import (
	"flag"
	"log"
	"net/http"
	"os"
	"time"
)

type config struct {
	addr    string
	root    string
	verbose bool
	timeout time.Duration
}

func parseFlags() config {
	var c config
	flag.StringVar(&c.addr, "addr", ":8080", "listen address")
	flag.StringVar(&c.root, "root", ".", "directory to serve")
	flag.BoolVar(&c.verbose, "v", false, "log every request")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Second, "read and write timeout")
	flag.Parse()
	return c
}

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		log.Printf("%s %s %v", r.Method, r.URL.Path, time.Since(start))
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
	srv := &http.Server{Addr: c.addr, Handler: h, ReadTimeout: c.timeout, WriteTimeout: c.timeout}
	log.Printf("serving %s on %s", c.root, c.addr)
	if err := srv.ListenAndServe(); err != nil {
		log.Fatal(err)
	}
}
