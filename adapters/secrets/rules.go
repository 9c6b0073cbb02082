package secrets

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/ports"
)

// gitleaksTOML is gitleaks v8.30.1's generated default rule set
// (config/gitleaks.toml, MIT, see rules/LICENSE.gitleaks), unmodified.
//
//go:embed rules/gitleaks.toml
var gitleaksTOML string

// maxWindow caps the per-side window of a windowed rule; a rule whose
// match can be longer is scanned over the whole text.
const maxWindow = 8 << 10

// rule is one compiled detection rule.
type rule struct {
	id          string
	re          *regexp.Regexp
	keywords    []string
	entropy     float64
	secretGroup int
	allowlists  []*allowlist
	global      bool // the global allowlist applies (gitleaks rules)
	// window is the longest match in bytes when every match contains a
	// keyword, so only text within window of a keyword hit can hold a
	// match; 0 means scan the whole text once any keyword occurs.
	window int
	// Keyword-anchored mode, for gitleaks' semi-generic rules
	// ((?i)[\w.-]{0,50}?(?:kw…)rest): anchored is ^(?:kw…)rest, run at
	// each keyword hit, and the match start is then extended left over
	// prefix characters, as the lazy prefix would. Go's regexp has no
	// lazy DFA, and the counted repetitions of these rules make its NFA
	// crawl (~2 MB/s) over keyword-dense text; a short anchored attempt
	// per hit avoids that. Nil for other rules.
	anchored  *regexp.Regexp
	head      *regexp.Regexp
	headNFA   *headNFA // the head on ASCII text; nil when it cannot model it
	headLen   int
	prefix    *syntax.Regexp // the [\w.-] class of the lazy prefix
	prefixMax int
	// anchoredCap is the input length for an anchored attempt; a match
	// that reaches it is retried on the rest of the text.
	anchoredCap int
	// live bounds an unbounded anchored attempt's input (deadAt), short
	// enough for Go's backtracker instead of its slower NFA simulation.
	live         *headDFA
	wordBoundary bool // the anchored form needs \b before the keyword
	// check is an extra post-match filter for our own rules: false drops
	// the finding text[start:end].
	check func(text string, start, end int) bool
}

type allowlist struct {
	and       bool
	target    string // "", "match" or "line"
	regex     *litRegexp
	stopwords *acMatcher
	// paths makes an AND allowlist inapplicable: scanned text has no path.
	paths bool
}

func compileAllow(a allowSpec) (*allowlist, error) {
	out := &allowlist{
		and:    strings.EqualFold(a.Condition, "AND"),
		target: a.RegexTarget,
		paths:  len(a.Paths) > 0,
	}
	switch out.target {
	case "", "match", "line":
	default:
		return nil, fmt.Errorf("unknown regexTarget %q", a.RegexTarget)
	}
	if len(a.Regexes) > 0 {
		re, err := compileLitRegexp(joinOr(a.Regexes))
		if err != nil {
			return nil, err
		}
		out.regex = re
	}
	if len(a.StopWords) > 0 {
		words := make([]string, len(a.StopWords))
		for i, w := range a.StopWords {
			w = strings.ToLower(w)
			for j := 0; j < len(w); j++ {
				if w[j] >= 0x80 {
					return nil, fmt.Errorf("stopword %q is not ASCII", w)
				}
			}
			words[i] = w
		}
		out.stopwords = newACMatcher(words)
	}
	return out, nil
}

// joinOr combines regexps as gitleaks' joinRegexOr does.
func joinOr(res []string) string {
	var sb strings.Builder
	sb.WriteString("(?:")
	for i, r := range res {
		if i > 0 {
			sb.WriteByte('|')
		}
		sb.WriteString(r)
	}
	sb.WriteByte(')')
	return sb.String()
}

// allowed mirrors gitleaks' checkFindingAllowed for a fragment without a
// path or commit.
func (a *allowlist) allowed(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	// Stopwords first: a trie walk is cheaper than the allowlist regexp.
	stopOK := a.stopwords != nil && a.stopwords.contains(secret) // the trie folds ASCII case
	if !a.and {
		return stopOK || a.regex != nil && target != "" && a.regex.MatchString(target)
	}
	if a.paths {
		return false
	}
	if a.stopwords != nil && !stopOK {
		return false
	}
	return a.regex == nil || target != "" && a.regex.MatchString(target)
}

// shannonEntropy is gitleaks' entropy: rune frequencies over the byte
// length, kept identical so its thresholds mean the same here.
func shannonEntropy(data string) float64 {
	if data == "" {
		return 0
	}
	inv := 1.0 / float64(len(data))
	e := 0.0
	if isASCII(data) {
		// The same sum without a map: the characters are the bytes.
		var counts [utf8.RuneSelf]int32
		for i := 0; i < len(data); i++ {
			counts[data[i]]++
		}
		for _, n := range counts {
			if n > 0 {
				f := float64(n) * inv
				e -= f * math.Log2(f)
			}
		}
		return e
	}
	counts := make(map[rune]int, 32)
	for _, c := range data {
		counts[c]++
	}
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// loadGitleaks compiles the embedded gitleaks rules and returns them with
// the global allowlist. Rules restricted to a file path are left out:
// scanned text has no path, and gitleaks' DetectString skips them too.
func loadGitleaks() ([]*rule, *allowlist, error) {
	cfg, err := parseConfig(gitleaksTOML)
	if err != nil {
		return nil, nil, fmt.Errorf("gitleaks.toml: %w", err)
	}
	global, err := compileAllow(cfg.Global)
	if err != nil {
		return nil, nil, fmt.Errorf("gitleaks.toml global allowlist: %w", err)
	}
	var rules []*rule
	for _, rs := range cfg.Rules {
		if rs.Path != "" || rs.Regex == "" {
			continue
		}
		r, err := compileRule(rs.ID, rs.Regex, rs.Keywords)
		if err != nil {
			return nil, nil, fmt.Errorf("gitleaks.toml: %w", err)
		}
		r.entropy = rs.Entropy
		r.secretGroup = rs.SecretGroup
		r.global = true
		for _, as := range rs.Allowlists {
			a, err := compileAllow(as)
			if err != nil {
				return nil, nil, fmt.Errorf("gitleaks.toml rule %s: %w", rs.ID, err)
			}
			r.allowlists = append(r.allowlists, a)
		}
		rules = append(rules, r)
	}
	return rules, global, nil
}

// compileRule compiles a rule's regexp and works out its window.
func compileRule(id, expr string, keywords []string) (*rule, error) {
	if len(keywords) == 0 {
		// Every rule in use has keywords; a keyword-free rule would have
		// to run on every text and is refused rather than made slow.
		return nil, fmt.Errorf("rule %s: no keywords", id)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", id, err)
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", id, err)
	}
	r := &rule{id: id, re: re}
	for _, k := range keywords {
		k = strings.ToLower(k)
		for i := 0; i < len(k); i++ {
			if k[i] >= 0x80 {
				return nil, fmt.Errorf("rule %s: keyword %q is not ASCII", id, k)
			}
		}
		r.keywords = append(r.keywords, k)
	}
	if n := maxMatchLen(tree); n != unbounded && n <= maxWindow && containsKeyword(tree, r.keywords) {
		r.window = n
	}
	if err := r.tryAnchored(tree); err != nil {
		return nil, fmt.Errorf("rule %s: %w", id, err)
	}
	return r, nil
}

// tryAnchored sets up keyword-anchored mode when the regexp is
//   - a lazy bounded prefix class, then a part whose every match starts
//     with one of the keywords, then the rest (gitleaks' semi-generic
//     rules, the costly ones on keyword-dense text); or
//   - an optional \b, then such a keyword-led part (jwt, slack-bot-token,
//     vault-service-token, whose keyword "s." hits in every sentence).
//
// Only then is "every match starts at a keyword hit, or at most prefixMax
// prefix characters before one" a proof, not a guess.
func (r *rule) tryAnchored(tree *syntax.Regexp) error {
	subs := r.keywordLed(tree)
	if subs == nil {
		return nil
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Sub: append([]*syntax.Regexp{{Op: syntax.OpBeginText}}, subs...)}
	re, err := regexp.Compile(rest.String())
	if err != nil {
		return err
	}
	if re.NumSubexp() != r.re.NumSubexp() {
		return fmt.Errorf("anchored form has %d groups, want %d", re.NumSubexp(), r.re.NumSubexp())
	}
	r.anchored = re
	if err := r.setHead(subs); err != nil {
		return err
	}
	// A bounded rest needs no more input than its longest match (plus
	// one byte of context for a trailing \b or $); an unbounded one gets
	// the rest of the text, and the anchored search stops where the
	// match fails.
	r.anchoredCap = -1
	if n := maxMatchLen(rest); n != unbounded {
		r.anchoredCap = n + 1
	} else {
		r.live = newLiveDFA(rest)
	}
	return nil
}

// keywordLed returns the parts of tree after its lazy prefix class or \b
// (setting r.prefix and r.prefixMax, or r.wordBoundary) when every match
// of them starts with a keyword, or nil when tree is not of a form that
// tryAnchored takes.
func (r *rule) keywordLed(tree *syntax.Regexp) []*syntax.Regexp {
	if tree.Op != syntax.OpConcat || len(tree.Sub) < 2 {
		return nil
	}
	subs := tree.Sub
	pre := subs[0]
	switch {
	case pre.Op == syntax.OpRepeat && pre.Min == 0 && pre.Max > 0 && pre.Flags&syntax.NonGreedy != 0 &&
		pre.Sub[0].Op == syntax.OpCharClass:
		r.prefix = pre.Sub[0]
		r.prefixMax = pre.Max
		subs = subs[1:]
	case pre.Op == syntax.OpWordBoundary:
		r.wordBoundary = true
		subs = subs[1:]
	}
	if len(subs) == 0 || !startsWithKeyword(&syntax.Regexp{Op: syntax.OpConcat, Sub: subs}, r.keywords) {
		r.prefix, r.prefixMax, r.wordBoundary = nil, 0, false
		return nil
	}
	return subs
}

// setHead sets up the head test of the anchored form whose parts are
// subs. The head is a necessary condition of the anchored form that is
// cheap to test, since Go's backtracker clears a bitmap of program size ×
// input length per call: its longest leading part with a short bounded
// match, then the bounded start every match of the next, unbounded part
// begins with (generic-api-key: the first ten characters of the secret),
// so most keyword hits fail here. A form short enough to be its own head
// gets none.
func (r *rule) setHead(subs []*syntax.Regexp) error {
	var headSubs []*syntax.Regexp
	headLen, whole := 0, true
	for _, sub := range subs {
		n := maxMatchLen(sub)
		if n == unbounded {
			whole = false
			if p, _ := necessaryPrefix(sub); p != nil && headLen+maxMatchLen(p) <= maxHeadLen {
				headSubs = append(headSubs, p)
				headLen += maxMatchLen(p)
			}
			break
		}
		if headLen+n > maxHeadLen {
			whole = false
			break
		}
		headSubs = append(headSubs, sub)
		headLen += n
	}
	if len(headSubs) == 0 || whole {
		return nil
	}
	head := &syntax.Regexp{Op: syntax.OpConcat, Sub: append([]*syntax.Regexp{{Op: syntax.OpBeginText}}, headSubs...)}
	var err error
	if r.head, err = regexp.Compile(head.String()); err != nil {
		return err
	}
	r.headNFA = newHeadNFA(head)
	// One byte more than the longest head match, so that \b and $ at
	// its end see the character that follows, as in the whole text.
	r.headLen = headLen + 1
	return nil
}

// maxHeadLen bounds the input of a head test.
const maxHeadLen = 160

// necessaryPrefix returns a short regexp of bounded match length such
// that every match of re starts with one of its matches (a repetition
// {n,m} is cut to {n}), or nil when there is none (re may match the empty
// string). whole reports that the prefix is re itself.
func necessaryPrefix(re *syntax.Regexp) (p *syntax.Regexp, whole bool) {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return re, true
	case syntax.OpCapture, syntax.OpPlus:
		p, _ := necessaryPrefix(re.Sub[0])
		return p, false
	case syntax.OpRepeat:
		switch {
		case re.Min < 1:
			return nil, false
		case maxMatchLen(re.Sub[0]) != unbounded:
			// sub{n,m} starts with sub{n}.
			return &syntax.Regexp{Op: syntax.OpRepeat, Min: re.Min, Max: re.Min, Flags: re.Flags, Sub: re.Sub[:1]}, re.Max == re.Min
		}
		p, _ := necessaryPrefix(re.Sub[0])
		return p, false
	case syntax.OpConcat:
		var subs []*syntax.Regexp
		for _, s := range re.Sub {
			p, whole := necessaryPrefix(s)
			if p != nil {
				subs = append(subs, p)
			}
			if !whole {
				if len(subs) == 0 {
					return nil, false
				}
				return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs}, false
			}
		}
		return re, true
	case syntax.OpAlternate:
		subs := make([]*syntax.Regexp, len(re.Sub))
		all := true
		for i, s := range re.Sub {
			var whole bool
			if subs[i], whole = necessaryPrefix(s); subs[i] == nil {
				return nil, false
			}
			all = all && whole
		}
		if all {
			return re, true
		}
		return &syntax.Regexp{Op: syntax.OpAlternate, Flags: re.Flags, Sub: subs}, false
	}
	return nil, false
}

// startsWithKeyword reports whether every match of re starts with one of
// keywords (compared case-insensitively).
func startsWithKeyword(re *syntax.Regexp, keywords []string) bool {
	switch re.Op {
	case syntax.OpCapture:
		return startsWithKeyword(re.Sub[0], keywords)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !startsWithKeyword(s, keywords) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		run := []string{""}
		for _, s := range re.Sub {
			set, ok := finite(s)
			if !ok {
				break
			}
			next, ok := cross(run, set)
			if !ok {
				break
			}
			run = next
		}
		for _, s := range run {
			if !hasPrefixAny(s, keywords) {
				return len(re.Sub) > 0 && startsWithKeyword(re.Sub[0], keywords)
			}
		}
		return true
	}
	set, ok := finite(re)
	if !ok || len(set) == 0 {
		return false
	}
	for _, s := range set {
		if !hasPrefixAny(s, keywords) {
			return false
		}
	}
	return true
}

func hasPrefixAny(s string, keywords []string) bool {
	for _, k := range keywords {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}

// inClass reports whether c is in the character class cc.
func inClass(cc *syntax.Regexp, c rune) bool {
	for i := 0; i+1 < len(cc.Rune); i += 2 {
		if c >= cc.Rune[i] && c <= cc.Rune[i+1] {
			return true
		}
	}
	return false
}

// Our own rules, beyond gitleaks' set.
const (
	// RuleEmail is the rule id of e-mail addresses, the name the port
	// gives personal data (redacted in results, blocked in arguments).
	RuleEmail = ports.SecretRuleEmail
	// RuleURLCredentials is the rule id of user:password in a URL.
	RuleURLCredentials = "url-credentials"
)

// emailExpr is a pragmatic RFC 5322 addr-spec: a local part of the
// common atext subset (letters, digits, . _ % + -, so plus-addressing), a
// dotted domain whose last label is letters. Unicode letters are allowed
// (RFC 6531). Quoted local parts, IP literals and the rarer atext (' { | }
// and so on) are left out: rare in tool output, and allowing = or ' would
// make the match swallow "key='" before the address.
const emailExpr = `[\p{L}\p{N}._%+-]{1,64}@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}\p{L}{2,63}`

// urlCredExpr is scheme://user:password@host for any scheme. The
// secret group is the userinfo (user and password): both are redacted.
// The user may be empty (redis://:pw@host); percent-encoding is allowed,
// and so is a raw @ (the last @ before the host ends the userinfo, as
// browsers read it).
const urlCredExpr = `\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://([^\s/?#:'"<>\x60\\\[\](){}]{0,256}:[^\s/?#'"<>\x60\\]{1,256})@[^\s/?#@'"<>\x60\\]`

// placeholderPassword matches URL passwords that are templates or masks,
// not secrets.
var placeholderPassword = regexp.MustCompile(`(?i)^(?:\*+|x+|\.+|<[^>]*>|\$\{[^}]*\}|\$\(?[a-z_][a-z0-9_]*\)?|\{\{[^}]*\}\}|%[a-z_]+%|\[[^\]]*\]|password|passwd|pass|pwd|secret|changeme|changeit)$`)

// sshRemote matches git@host: and friends, which are SSH remotes, not
// mailboxes.
var sshRemote = regexp.MustCompile(`^git@`)

// retinaAsset matches logo@2x.png and similar asset names.
var retinaAsset = regexp.MustCompile(`(?i)@\d+(?:\.\d+)?x\.(?:png|jpe?g|gif|webp|svg|avif|ico)$`)

func ownRules() ([]*rule, error) {
	email, err := compileRule(RuleEmail, emailExpr, []string{"@"})
	if err != nil {
		return nil, err
	}
	email.check = func(text string, start, end int) bool {
		s := text[start:end]
		if retinaAsset.MatchString(s) {
			return false
		}
		// git@github.com:org/repo is an SSH remote, not a mailbox.
		return !(sshRemote.MatchString(s) && end < len(text) && text[end] == ':')
	}
	creds, err := compileRule(RuleURLCredentials, urlCredExpr, []string{"://"})
	if err != nil {
		return nil, err
	}
	creds.secretGroup = 1
	creds.check = func(text string, start, end int) bool {
		_, pw, _ := strings.Cut(text[start:end], ":")
		return !placeholderPassword.MatchString(pw)
	}
	return []*rule{email, creds}, nil
}
