package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/net/idna"

	"github.com/kaizen-code/kz/engine"
)

// A WebFetch(domain:HOST) rule names one host. Claude Code builds the
// rule content of a fetch as "domain:" + the URL's hostname and looks it
// up as an exact string, so `domain:example.com` covers example.com and not
// its subdomains (docs: code.claude.com/docs/en/iam, "WebFetch(domain:
// example.com) matches fetch requests to example.com"; source:
// tools/WebFetchTool/WebFetchTool.ts, webFetchToolInputToPermissionRuleContent;
// wildcards are not honoured there, github.com/anthropics/claude-code/issues/11972).
// kz compares the same way, on hosts normalised like a browser's URL
// parser does (lower case, IDNA to ASCII, IPv4 numbers in any notation,
// IPv6 canonical, one trailing dot dropped, port and user info ignored),
// and says what its two extensions mean: `domain:*.example.com` covers the
// subdomains of example.com (not example.com itself) and `domain:*` every
// host.

// hostProfile maps a host like the WHATWG URL parser does (UTS #46,
// nontransitional, without the STD3 restriction that would refuse
// underscores). It is made on first use, so that every kz process does
// not pay for it at start.
var hostProfile = sync.OnceValue(func() *idna.Profile {
	return idna.New(idna.MapForLookup(), idna.StrictDomainName(false), idna.BidiRule(), idna.Transitional(false))
})

// errBadHost is wrapped by every host that cannot be normalised.
var errBadHost = errors.New("not a valid host")

// normalizeHost returns the canonical form of a host name or IP literal
// (brackets allowed around IPv6), as a browser would connect to it.
func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("%w: empty", errBadHost)
	}
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return "", fmt.Errorf("%w: %q", errBadHost, h)
		}
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("%w: %q is not an IPv6 address", errBadHost, h)
		}
		return "[" + a.Unmap().String() + "]", nil
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is6() && a.Zone() == "" {
		// A rule may name an IPv6 address without brackets.
		return "[" + a.Unmap().String() + "]", nil
	}
	if strings.ContainsFunc(h, func(c rune) bool { return c <= 0x20 || c == 0x7f }) {
		return "", fmt.Errorf("%w: %q contains spaces or control characters", errBadHost, h)
	}
	a, err := hostProfile().ToASCII(h)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", errBadHost, h, err)
	}
	a = strings.ToLower(a)
	// "example.com." is the fully qualified spelling of example.com.
	a = strings.TrimSuffix(a, ".")
	if a == "" || strings.HasPrefix(a, ".") || strings.Contains(a, "..") {
		return "", fmt.Errorf("%w: %q has an empty label", errBadHost, h)
	}
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", fmt.Errorf("%w: %q contains %q", errBadHost, h, c)
		}
	}
	if v4, ok, err := parseIPv4(a); err != nil {
		return "", err
	} else if ok {
		return v4, nil
	}
	return a, nil
}

// parseIPv4 applies the WHATWG IPv4 parser: a host whose last label is a
// number is an IPv4 address in decimal, octal (leading 0) or hex (0x)
// parts, 1 to 4 of them (`2130706433`, `0x7f.1`, `0177.0.0.01` are all
// 127.0.0.1), or invalid. It reports false for ordinary names.
func parseIPv4(h string) (string, bool, error) {
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	if _, err := ipv4Part(last); err != nil && !isAllDigits(last) {
		return "", false, nil
	}
	if len(labels) > 4 {
		return "", false, fmt.Errorf("%w: %q looks like an IPv4 address with too many parts", errBadHost, h)
	}
	nums := make([]uint64, len(labels))
	for i, l := range labels {
		n, err := ipv4Part(l)
		if err != nil {
			return "", false, fmt.Errorf("%w: %q looks like an IPv4 address: %w", errBadHost, h, err)
		}
		if i < len(labels)-1 && n > 255 {
			return "", false, fmt.Errorf("%w: %q has an IPv4 part above 255", errBadHost, h)
		}
		nums[i] = n
	}
	if nums[len(nums)-1] >= 1<<(8*(5-len(nums))) {
		return "", false, fmt.Errorf("%w: %q is beyond the IPv4 range", errBadHost, h)
	}
	v := nums[len(nums)-1]
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), true, nil
}

func ipv4Part(s string) (uint64, error) {
	base := 10
	switch {
	case s == "":
		return 0, errors.New("empty part")
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	return strconv.ParseUint(s, base, 32)
}

func isAllDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// urlHost returns the normalised host a fetch of rawURL reaches, or why
// the URL is refused: only http and https URLs with a host, no
// backslashes (which browsers read as slashes, so `http://a.com\@b.com`
// would reach a.com while Go's parser reads b.com).
func urlHost(rawURL string) (string, error) {
	if strings.ContainsAny(rawURL, "\\") {
		return "", fmt.Errorf("the URL %q contains a backslash, which parsers read differently", rawURL)
	}
	if strings.ContainsFunc(rawURL, func(c rune) bool { return c <= 0x20 || c == 0x7f }) {
		return "", fmt.Errorf("the URL %q contains spaces or control characters", rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("cannot parse the URL: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", fmt.Errorf("the URL %q is not http or https", rawURL)
	}
	if u.Opaque != "" || u.Host == "" {
		return "", fmt.Errorf("the URL %q names no host", rawURL)
	}
	h := u.Hostname()
	if strings.HasPrefix(u.Host, "[") || strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	n, err := normalizeHost(h)
	if err != nil {
		return "", fmt.Errorf("the URL %q: %w", rawURL, err)
	}
	return n, nil
}

// domainPattern is a WebFetch rule's domain, normalised at parse time:
// "*" (every host), "*.<host>" (its subdomains) or a host.
func domainPattern(spec string) (string, error) {
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return "", errors.New("WebFetch rules take domain:<host>")
	}
	d = strings.TrimSpace(d)
	if d == "*" {
		return d, nil
	}
	sub := strings.HasPrefix(d, "*.")
	if sub {
		d = d[2:]
	}
	if strings.Contains(d, "*") {
		return "", fmt.Errorf("domain %q: * is allowed only as the whole domain or a leading \"*.\"", d)
	}
	n, err := normalizeHost(d)
	if err != nil {
		return "", fmt.Errorf("domain: %w", err)
	}
	if sub {
		return "*." + n, nil
	}
	return n, nil
}

// matchHost matches a rule's normalised domain pattern against a
// normalised host.
func matchHost(pattern, host string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:]) && !strings.HasPrefix(host, "[")
	}
	return host == pattern
}

// fetchURLs returns the URLs a fetch request names: Claude Code's and kz's
// WebFetch take {"url"}, Gemini CLI's web_fetch takes a prompt holding
// them.
func (e *eval) fetchURLs() []string {
	var in struct {
		URL    *string `json:"url"`
		Prompt string  `json:"prompt"`
	}
	_ = json.Unmarshal(e.q.Request.Input, &in)
	if in.URL != nil {
		return []string{*in.URL}
	}
	var out []string
	for _, w := range strings.Fields(in.Prompt) {
		l := strings.ToLower(w)
		if k := max(strings.Index(l, "http://"), strings.Index(l, "https://")); k >= 0 {
			out = append(out, strings.TrimRight(w[k:], ".,;:!?)]}>'\""))
		}
	}
	return out
}

// fetchHosts normalises every URL of the request once per evaluation.
func (e *eval) fetchHosts() ([]string, error) {
	if e.hostsDone {
		return e.hosts, e.hostsErr
	}
	e.hostsDone = true
	urls := e.fetchURLs()
	if len(urls) == 0 {
		e.hostsErr = errors.New("the request names no URL")
	}
	for _, u := range urls {
		h, err := urlHost(u)
		if err != nil {
			e.hostsErr = err
			break
		}
		e.hosts = append(e.hosts, h)
	}
	return e.hosts, e.hostsErr
}

// matchFetch reports whether a WebFetch rule covers the request: a rule
// without a domain covers every fetch; a domain rule covers it when it
// matches any of its hosts (restricting rules) or all of them (allow).
func (e *eval) matchFetch(r Rule) bool {
	if r.matchesAll() {
		return true
	}
	hosts, err := e.fetchHosts()
	if err != nil || len(hosts) == 0 {
		return false
	}
	for _, h := range hosts {
		m := matchHost(r.domain, h)
		if m && r.Action != ActionAllow {
			return true
		}
		if !m && r.Action == ActionAllow {
			return false
		}
	}
	return r.Action == ActionAllow
}

// fetchValidation denies a fetch whose URL cannot be judged.
func (e *eval) fetchValidation() StageResult {
	if _, err := e.fetchHosts(); err != nil {
		return StageResult{Stage: StageValidation, Decision: engine.DecisionDeny, Reason: err.Error()}
	}
	return StageResult{Stage: StageValidation}
}

// PrivateHostAllowed implements tools.FetchPolicy: a fetch may connect to
// a loopback, private, link-local or unspecified address only for a host
// that an allow rule names, exactly or as one of the subdomains of
// `*.domain`. A rule for every host (`WebFetch`, `domain:*`), a session
// grant, yolo or a person's yes to one fetch does not lift it: the person
// allowed a fetch, not a request to this machine's or network's services,
// which is what a public name resolving there most often means (DNS
// rebinding). A host that a deny rule names is never allowed.
func (g *Gate) PrivateHostAllowed(host string) bool {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	h, err := normalizeHost(host)
	if err != nil {
		return false
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	allowed := false
	for _, r := range g.rules {
		if r.Kind != KindWebFetch || r.matchesAll() || r.domain == "*" || !matchHost(r.domain, h) {
			continue
		}
		if r.Action == ActionDeny {
			return false
		}
		if r.Action == ActionAllow {
			allowed = true
		}
	}
	return allowed
}

// fetchGrantKeys are the session grant keys of a fetch, one per host:
// "allow for this session" on a fetch of example.com allows example.com,
// never every fetch.
func (e *eval) fetchGrantKeys() ([]string, []string, error) {
	hosts, err := e.fetchHosts()
	if err != nil || len(hosts) == 0 {
		return nil, nil, fmt.Errorf("%w: the URL cannot be judged", ErrNotGrantable)
	}
	var keys, rules []string
	for _, h := range hosts {
		keys = append(keys, "fetch:"+h)
		rules = append(rules, "WebFetch(domain:"+h+")")
	}
	return keys, rules, nil
}

// fetchAllowStage decides a fetch no deny or ask rule stopped: a session
// grant for every host, an allow rule, yolo, or else ask, naming the host
// and the rule that would allow it.
func (e *eval) fetchAllowStage(grants map[string]bool) StageResult {
	if hosts, err := e.fetchHosts(); err == nil && len(hosts) > 0 {
		all := true
		for _, h := range hosts {
			all = all && grants["fetch:"+h]
		}
		if all {
			return StageResult{Stage: StageAllow, Decision: engine.DecisionAllow, Rule: "session grant",
				Reason: "fetching from " + strings.Join(hosts, ", ") + " is granted for this session"}
		}
	}
	for _, r := range e.rules {
		if r.Action == ActionAllow && e.applies(r) && e.matchFetch(r) {
			return StageResult{Stage: StageAllow, Decision: engine.DecisionAllow, Rule: r.String(), Reason: "allowed by rule"}
		}
	}
	if e.q.PermissionMode == engine.PermissionYolo {
		return StageResult{Stage: StageAllow, Decision: engine.DecisionAllow, Reason: "permission mode yolo"}
	}
	reason := "ask before fetching a URL"
	if len(e.hosts) > 0 {
		reason = "ask before fetching from " + strings.Join(e.hosts, ", ") + ": no rule allows it (a rule such as WebFetch(domain:" +
			e.hosts[0] + ") would)"
	}
	return StageResult{Stage: StageAllow, Decision: engine.DecisionAsk, Reason: reason}
}
