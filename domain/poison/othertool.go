package poison

import "strings"

// toolNames are the names of a Context, in lower case: the server's own
// (never a finding) and the other servers' (a finding when named).
type toolNames struct {
	own    map[string]bool
	others []string
	prefix []string // mcp_<server>_ and mcp__<server>__: this server's model-facing names
}

func newToolNames(c Context) toolNames {
	t := toolNames{own: map[string]bool{}}
	for _, n := range c.OwnTools {
		t.own[strings.ToLower(n)] = true
	}
	if c.ServerName != "" {
		name := strings.ToLower(c.ServerName)
		t.prefix = []string{"mcp_" + name + "_", "mcp__" + name + "__"}
	}
	seen := map[string]bool{}
	for _, n := range c.OtherTools {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" && !t.own[n] && !t.isOwnModelName(n) && !seen[n] {
			seen[n] = true
			t.others = append(t.others, n)
		}
	}
	return t
}

func (t toolNames) isOwnModelName(n string) bool {
	for _, p := range t.prefix {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// modelNames are the model-facing tool names in a lower-case text:
// mcp_<server>_<tool> (tool.ModelToolName), mcp__<server>__<tool> (other
// clients' scheme) or a server reference mcp_<server> alone, with their
// offsets.
func modelNames(text string) (names []string, at []int) {
	for _, i := range occurrences(text, "mcp_", len(text)) {
		if !boundary(text, i-1) {
			continue
		}
		j := i + len("mcp_")
		for j < len(text) && !boundary(text, j) {
			j++
		}
		if name := text[i:j]; strings.TrimLeft(name[len("mcp_"):], "_") != "" {
			names, at = append(names, name), append(at, i)
		}
	}
	return names, at
}

// otherTool reports a name of another server's tool: one of OtherTools,
// or a model-facing mcp_… name that is not of this server. A name with
// an underscore, a hyphen, a digit or a dot is found at word boundaries; a
// plain word ("search") only where it is written as a name: in quotes or
// backticks, or followed by "()" or " tool".
func (s *scan) otherTool(v view) (string, bool) {
	text := lowerASCII(v.shown)
	best := -1
	names, at := modelNames(text)
	for k, name := range names {
		if !s.ownModelRef(name) {
			best = at[k]
			break
		}
	}
	for _, n := range s.tools.others {
		if i := nameAt(text, n); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	return s.atShown(v, best), true
}

// ownModelRef reports a model-facing name (or server reference) of this
// server, or of a tool the server itself has.
func (s *scan) ownModelRef(name string) bool {
	if s.tools.own[name] {
		return true
	}
	for _, p := range s.tools.prefix {
		if strings.HasPrefix(name+"_", p) || strings.HasPrefix(name+"__", p) {
			return true
		}
	}
	return false
}

// nameAt is the offset of the first mention of name in text (both lower
// case), or -1.
func nameAt(text, name string) int {
	plain := strings.IndexFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z') }) < 0
	for off := 0; off < len(text); {
		i := strings.Index(text[off:], name)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(name)
		if boundary(text, i-1) && boundary(text, end) && (!plain || written(text, i, end)) {
			return i
		}
		off = i + 1
	}
	return -1
}

// boundary reports whether the byte at i is outside the text or not a
// character of a tool name.
func boundary(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return true
	}
	c := text[i]
	return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-')
}

// written reports a plain word at text[i:end] written as a name.
func written(text string, i, end int) bool {
	if i > 0 && end < len(text) && strings.ContainsRune("`'\"", rune(text[i-1])) && text[end] == text[i-1] {
		return true
	}
	rest := text[end:]
	return strings.HasPrefix(rest, "()") || strings.HasPrefix(rest, " tool")
}
