package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/kaizen-code/kz/engine"
)

// HostResolver looks up the addresses of a host name; *net.Resolver
// implements it, tests map names to 127.0.0.1 with their own.
type HostResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// AddressRefusedError says a fetch was refused because its host resolved
// only to addresses web_fetch does not reach without a rule.
type AddressRefusedError struct {
	Host string
	// Addrs are the refused addresses with why, e.g. "127.0.0.1 (loopback)".
	Addrs []string
}

func (e *AddressRefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: it resolves to %s; web_fetch reaches loopback, private, link-local "+
		"and unspecified addresses only for a host that an allow rule names, such as WebFetch(domain:%s)",
		e.Host, strings.Join(e.Addrs, ", "), e.Host)
}

// RedirectRefusedError says the gate refused a redirect's target.
type RedirectRefusedError struct {
	From, To string
	Reason   string
}

func (e *RedirectRefusedError) Error() string {
	return fmt.Sprintf("the redirect from %s to %s was refused: %s; nothing was fetched from %s", e.From, e.To, e.Reason, e.To)
}

// fetchedPage is one successful response with what the fetch went through
// to get it.
type fetchedPage struct {
	finalURL *url.URL
	// hops are the URLs that redirected, in order.
	hops []string
	// mediaType is the response's media type, lower case, without
	// parameters; contentType is the header as sent.
	mediaType   string
	contentType string
	body        []byte
	truncated   bool
}

// fetch gets u, following redirects itself so that each hop to a new host
// passes the gate before anything is sent there, and each request gets
// its own timeout while a question to the person about a hop gets none.
func (w WebFetch) fetch(ctx context.Context, rc *RunContext, start *url.URL, policy FetchPolicy) (*fetchedPage, error) {
	d := &guardedDialer{resolver: w.resolver(), policy: policy, dialer: net.Dialer{Timeout: w.timeout()}}
	tr := &http.Transport{
		// No proxy: the dialer must see, and check, the server's own
		// address.
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    w.timeout(),
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 1 << 20,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	allowed := map[string]bool{hostKey(start): true}
	u := start
	var hops []string
	for {
		page, next, err := w.get(ctx, client, u)
		if err != nil {
			return nil, err
		}
		if next == nil {
			page.finalURL, page.hops = u, hops
			return page, nil
		}
		if len(hops) == maxRedirects {
			return nil, fmt.Errorf("%s redirected more than %d times; stopped at %s", start, maxRedirects, next)
		}
		if err := checkHop(ctx, rc, u, next, allowed); err != nil {
			return nil, err
		}
		hops = append(hops, u.String())
		u = next
	}
}

// checkHop judges a redirect's target. Rules are per host, so a hop to a
// host this fetch was already allowed to reach has that answer; a hop to
// a new host is asked of the gate like a fetch of its own (deny and ask
// rules, allow rules, then the person). Without a gate, nothing new is
// reached.
func checkHop(ctx context.Context, rc *RunContext, from, to *url.URL, allowed map[string]bool) error {
	key := hostKey(to)
	if allowed[key] {
		return nil
	}
	if rc.Permit == nil {
		return &RedirectRefusedError{From: from.String(), To: to.String(), Reason: "no gate can judge the new host"}
	}
	input, err := json.Marshal(map[string]string{"url": to.String()})
	if err != nil {
		return fmt.Errorf("redirect to %s: %w", to, err)
	}
	a := rc.Permit(ctx, engine.PermissionRequest{Input: input})
	if !a.Allowed() {
		reason := a.Reason
		if reason == "" {
			reason = "permission denied"
		}
		return &RedirectRefusedError{From: from.String(), To: to.String(), Reason: reason}
	}
	allowed[key] = true
	return nil
}

// hostKey is a URL's host as rules compare it: lower case, without a
// trailing dot or the port.
func hostKey(u *url.URL) string {
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// get sends one GET. It returns the page of a 2xx answer, or the target
// of a redirect.
func (w WebFetch) get(ctx context.Context, client *http.Client, u *url.URL) (*fetchedPage, *url.URL, error) {
	rctx, cancel := context.WithTimeout(ctx, w.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	req.Header.Set("User-Agent", "kz-web-fetch/1.0")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1")
	timedOut := func(err error) error {
		if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("fetch %s: no complete answer within %s: %w", u, w.timeout(), err)
		}
		return fmt.Errorf("fetch %s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var refused *AddressRefusedError
		if errors.As(err, &refused) {
			return nil, nil, refused
		}
		return nil, nil, timedOut(err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return nil, nil, fmt.Errorf("fetch %s: %s without a Location", u, resp.Status)
		}
		next, err := u.Parse(loc)
		if err != nil {
			return nil, nil, fmt.Errorf("fetch %s: redirect to %q: %w", u, loc, err)
		}
		next, err = parseFetchURL(next.String())
		if err != nil {
			return nil, nil, fmt.Errorf("fetch %s: refused redirect: %w", u, err)
		}
		return nil, next, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, fmt.Errorf("fetch %s: the server answered %s", u, resp.Status)
	}
	p := &fetchedPage{contentType: resp.Header.Get("Content-Type")}
	if mt, _, err := mime.ParseMediaType(p.contentType); err == nil {
		p.mediaType = strings.ToLower(mt)
	}
	limit := w.maxDownload()
	p.body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, timedOut(err)
	}
	if int64(len(p.body)) > limit {
		p.body, p.truncated = p.body[:limit], true
	}
	return p, nil, nil
}

func (w WebFetch) resolver() HostResolver {
	if w.Resolver != nil {
		return w.Resolver
	}
	return net.DefaultResolver
}

// guardedDialer connects only to addresses it has checked. It resolves
// the name itself and dials the checked address literally, so no second
// lookup can answer differently (DNS rebinding).
type guardedDialer struct {
	resolver HostResolver
	policy   FetchPolicy
	dialer   net.Dialer
}

// DialContext implements http.Transport's DialContext.
func (d *guardedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", addr, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("look up %s: %w", host, err)
	}
	private := d.policy != nil && d.policy.PrivateHostAllowed(host)
	var refused []string
	var errs []error
	for _, a := range addrs {
		if why := blockedAddr(a); why != "" && !private {
			refused = append(refused, a.String()+" ("+why+")")
			continue
		}
		conn, err := d.dialer.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if len(refused) == 0 {
			return nil, fmt.Errorf("look up %s: no address", host)
		}
		return nil, &AddressRefusedError{Host: host, Addrs: refused}
	}
	return nil, errors.Join(errs...)
}

// blockedAddr says why web_fetch does not reach a, or "" for a public
// address. IPv4 addresses inside IPv6 (mapped, NAT64, 6to4) are judged as
// the IPv4 address they reach.
func blockedAddr(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		return blockedAddr(a.Unmap())
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return blockedAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return blockedAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsInterfaceLocalMulticast() || a.IsMulticast():
		return "multicast"
	}
	for _, r := range reserved {
		if r.p.Contains(a) {
			return r.why
		}
	}
	return ""
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	// reserved are the special-purpose ranges (RFC 6890) that the netip
	// predicates leave out and that reach no public server.
	reserved = []struct {
		p   netip.Prefix
		why string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
		{netip.MustParsePrefix("100.64.0.0/10"), "private (shared address space)"},
		{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
		{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
		{netip.MustParsePrefix("fec0::/10"), "private (site-local)"},
	}
)
