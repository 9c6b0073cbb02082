package poison

// scan is one run of the rules over a definition's fields.
type scan struct {
	c       Context
	fields  []view // the fields, then the texts decoded from them
	cut     string // where the text passed MaxTextBytes, or ""
	tools   toolNames
	read    int // bytes of the fields read
	attempt int // decodings tried (work bound, see worst_test.go)
	decoded int // decodings that gave text
}

func newScan(c Context) *scan {
	return &scan{c: c, tools: newToolNames(c)}
}

// A rule reports the excerpt of its finding in one view, if any.
type rule func(s *scan, v view) (string, bool)

// rules are the rules in the order of Codes; decoded says whether the
// rule also reads the texts decoded from encoded runs.
var rules = []struct {
	code    string
	check   rule
	decoded bool
}{
	{HiddenCharacters, (*scan).hidden, false},
	{Instruction, (*scan).instruction, true},
	{OtherTool, (*scan).otherTool, false},
	{EncodedPayload, (*scan).encoded, true},
	{SecretRequest, (*scan).secretRequest, true},
	{URL, (*scan).url, false},
	{Padding, (*scan).padding, false},
}

// findings runs every rule over the views: the first excerpt of each.
func (s *scan) findings() []Finding {
	var out []Finding
	for _, r := range rules {
		if e, ok := s.first(r.check, r.decoded); ok {
			out = append(out, Finding{Code: r.code, Excerpt: e})
		} else if r.code == Padding && s.cut != "" {
			out = append(out, Finding{Code: Padding, Excerpt: s.finish(s.cut + ": more text than the 64 KiB read")})
		}
	}
	return out
}

func (s *scan) first(check rule, decoded bool) (string, bool) {
	for _, v := range s.fields {
		if v.depth > 0 && !decoded {
			continue
		}
		if e, ok := check(s, v); ok {
			return e, true
		}
	}
	return "", false
}

// lowerASCII is s with ASCII letters in lower case, same length.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
