package thirdparty

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	readability "codeberg.org/readeck/go-readability/v2"
)

var updateReadability = flag.Bool("update-readability", false, "rewrite testdata/readability.golden from the readability module in use")

// readabilityPage exercises the parser's regular expressions, which the
// fork compiles on first use (README.md): a title with separators and a
// hierarchy, Open Graph and Dublin Core metadata, a byline, hidden
// elements, share buttons, an advertisement and a loading label, lazy
// images with srcset, a data URL, a video iframe, JSON-LD with CDATA and
// a favicon size.
const readabilityPage = `<!DOCTYPE html>
<html><head>
<title>Parsing requests safely | Handlers » The kz Journal</title>
<meta property="og:title" content="Parsing requests safely">
<meta property="og:site_name" content="The kz Journal">
<meta name="dc.creator" content="Ada Lovelace">
<meta name="article:published_time" content="2026-03-04T10:00:00Z">
<meta name="description" content="How the handler parses and checks a request.">
<link rel="icon" sizes="32x32" href="/favicon-32x32.png">
<script type="application/ld+json">/*<![CDATA[*/{"@context":"https://schema.org","@type":"NewsArticle","headline":"Parsing requests safely","author":{"@type":"Person","name":"Ada Lovelace"}}/*]]>*/</script>
</head><body>
<div class="share sharedaddy"><a href="/s">Share this</a></div>
<nav class="menu"><a href="/">Home</a> <a href="/about">About</a></nav>
<article>
<h1>Parsing requests safely</h1>
<p class="byline">By Ada Lovelace</p>
<p>The handler in server/handler.go parses the request, checks the session and writes the reply. It keeps the connection open while the client streams, and closes it when the context ends. Each step is short, and each is tested on its own.</p>
<div style="display: none">hidden text that must not appear</div>
<div style="visibility:hidden">also hidden</div>
<p>Validation comes first. A request whose body does not parse is refused with a clear error, and nothing is written. The store is called only once the request is known to be whole, so a half-read body never reaches it.</p>
<figure><img data-src="/img/flow.png" data-srcset="/img/flow.png 1x, /img/flow@2x.png 2x" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="flow"></figure>
<p>Retries are safe because the write is idempotent: the same request written twice leaves one row. A busy database is retried once, after a short pause, and then the error is returned to the client.</p>
<iframe src="https://www.youtube.com/embed/abc123" width="560" height="315"></iframe>
<div class="ad"><p>Advertisement</p></div>
<p>Loading...</p>
<p>Finally the reply is written. Its size is known before the first byte goes out, so the client can tell a cut connection from a short answer, and the handler logs the request's id with the outcome.</p>
</article>
<footer><p>Privacy | Terms</p></footer>
</body></html>`

// TestReadabilityForkArticle holds the fork's article, metadata and text
// to upstream's (the golden was written by upstream v2.1.3), parsed from
// four goroutines at once, the first use of every expression included.
func TestReadabilityForkArticle(t *testing.T) {
	u, err := url.Parse("https://journal.example/handlers/parsing")
	if err != nil {
		t.Fatal(err)
	}
	render := func() (string, error) {
		art, err := readability.FromReader(strings.NewReader(readabilityPage), u)
		if err != nil {
			return "", err
		}
		var text strings.Builder
		if err := art.RenderText(&text); err != nil {
			return "", err
		}
		var html strings.Builder
		if err := art.RenderHTML(&html); err != nil {
			return "", err
		}
		published, _ := art.PublishedTime()
		return fmt.Sprintf("title: %s\nbyline: %s\nexcerpt: %s\nsite: %s\nimage: %s\nfavicon: %s\npublished: %s\n\n%s\n\n%s\n",
			art.Title(), art.Byline(), art.Excerpt(), art.SiteName(), art.ImageURL(), art.Favicon(), published, text.String(), html.String()), nil
	}
	golden := filepath.Join("testdata", "readability.golden")
	if *updateReadability {
		got, err := render()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := render()
			if err != nil {
				t.Errorf("FromReader: %v", err)
				return
			}
			if got != string(want) {
				t.Errorf("article differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
	wg.Wait()
}
