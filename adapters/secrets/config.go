package secrets

import (
	"fmt"
	"strconv"
	"strings"
)

// ruleSpec is one [[rules]] table of gitleaks.toml, before compilation.
type ruleSpec struct {
	ID          string
	Regex       string
	Path        string
	SecretGroup int
	Entropy     float64
	Keywords    []string
	Allowlists  []allowSpec
}

// allowSpec is one allowlist table, global ([allowlist]) or per rule
// ([[rules.allowlists]]).
type allowSpec struct {
	Condition   string
	RegexTarget string
	Regexes     []string
	Paths       []string
	StopWords   []string
}

// configSpec is the parsed gitleaks.toml.
type configSpec struct {
	Global allowSpec
	Rules  []ruleSpec
}

// parseConfig reads the subset of TOML that gitleaks' generated
// config/gitleaks.toml uses: three table headers, `key = value` with
// basic strings without escapes, literal strings (single- and
// triple-quoted, on one line), numbers and arrays of strings over several
// lines.
// Anything else is an error rather than a guess, so a rule file update
// that uses more of TOML fails loudly at init (and in the tests) instead of
// silently dropping rules. A general TOML library would do, but this
// keeps a dependency out of the security path for a regular, generated
// file; benchcompare cross-checks the result against gitleaks' own loader.
func parseConfig(src string) (configSpec, error) {
	var (
		cfg   configSpec
		table = "" // "", "allowlist", "rules", "rules.allowlists"
		lines = strings.Split(src, "\n")
	)
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch line {
		case "[allowlist]":
			table = "allowlist"
			continue
		case "[[rules]]":
			table = "rules"
			cfg.Rules = append(cfg.Rules, ruleSpec{})
			continue
		case "[[rules.allowlists]]":
			if len(cfg.Rules) == 0 {
				return cfg, fmt.Errorf("line %d: [[rules.allowlists]] before any [[rules]]", i+1)
			}
			table = "rules.allowlists"
			r := &cfg.Rules[len(cfg.Rules)-1]
			r.Allowlists = append(r.Allowlists, allowSpec{})
			continue
		}
		if strings.HasPrefix(line, "[") {
			return cfg, fmt.Errorf("line %d: unsupported table %q", i+1, line)
		}
		key, rest, ok := strings.Cut(line, "=")
		if !ok {
			return cfg, fmt.Errorf("line %d: expected key = value", i+1)
		}
		key = strings.TrimSpace(key)
		rest = strings.TrimSpace(rest)

		var (
			strs   []string
			scalar string
			isArr  = strings.HasPrefix(rest, "[")
		)
		if isArr {
			// Gather the array up to its closing bracket, which gitleaks
			// writes alone on a line or at the end of a one-line array.
			body := rest[1:]
			for !strings.HasSuffix(strings.TrimSpace(body), "]") {
				i++
				if i >= len(lines) {
					return cfg, fmt.Errorf("key %q: unterminated array", key)
				}
				body += "\n" + lines[i]
			}
			body = strings.TrimSuffix(strings.TrimSpace(body), "]")
			var err error
			if strs, err = parseStringList(body); err != nil {
				return cfg, fmt.Errorf("line %d: key %q: %w", i+1, key, err)
			}
		} else {
			scalar = rest
		}

		str := func() (string, error) {
			if isArr {
				return "", fmt.Errorf("line %d: key %q: want a string, got an array", i+1, key)
			}
			s, tail, err := parseString(scalar)
			if err != nil {
				return "", fmt.Errorf("line %d: key %q: %w", i+1, key, err)
			}
			if strings.TrimSpace(tail) != "" {
				return "", fmt.Errorf("line %d: key %q: trailing %q", i+1, key, tail)
			}
			return s, nil
		}
		var err error
		switch table {
		case "":
			switch key {
			case "title", "minVersion", "description":
				_, err = str()
			default:
				err = fmt.Errorf("line %d: unknown top-level key %q", i+1, key)
			}
		case "allowlist":
			if key == "description" {
				_, err = str()
			} else {
				err = setAllow(&cfg.Global, key, isArr, strs, str)
			}
		case "rules.allowlists":
			r := &cfg.Rules[len(cfg.Rules)-1]
			if key == "description" {
				_, err = str()
			} else {
				err = setAllow(&r.Allowlists[len(r.Allowlists)-1], key, isArr, strs, str)
			}
		case "rules":
			r := &cfg.Rules[len(cfg.Rules)-1]
			switch key {
			case "id":
				r.ID, err = str()
			case "description":
				_, err = str()
			case "regex":
				r.Regex, err = str()
			case "path":
				r.Path, err = str()
			case "keywords":
				if !isArr {
					err = fmt.Errorf("line %d: keywords: want an array", i+1)
				}
				r.Keywords = strs
			case "entropy":
				r.Entropy, err = strconv.ParseFloat(scalar, 64)
			case "secretGroup":
				r.SecretGroup, err = strconv.Atoi(scalar)
			default:
				err = fmt.Errorf("line %d: unknown rule key %q", i+1, key)
			}
		}
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func setAllow(a *allowSpec, key string, isArr bool, strs []string, str func() (string, error)) error {
	var err error
	switch key {
	case "condition":
		a.Condition, err = str()
	case "regexTarget":
		a.RegexTarget, err = str()
	case "regexes", "paths", "stopwords":
		if !isArr {
			return fmt.Errorf("allowlist %s: want an array", key)
		}
		switch key {
		case "regexes":
			a.Regexes = strs
		case "paths":
			a.Paths = strs
		default:
			a.StopWords = strs
		}
	default:
		err = fmt.Errorf("unknown allowlist key %q", key)
	}
	return err
}

// parseStringList parses the inside of a TOML array of strings.
func parseStringList(body string) ([]string, error) {
	var out []string
	rest := strings.TrimSpace(body)
	for rest != "" {
		s, tail, err := parseString(rest)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		tail = strings.TrimSpace(tail)
		if strings.HasPrefix(tail, ",") {
			tail = strings.TrimSpace(tail[1:])
		} else if tail != "" {
			return nil, fmt.Errorf("expected , between array items, got %q", tail)
		}
		rest = tail
	}
	return out, nil
}

// parseString parses one string at the start of s and returns the rest.
func parseString(s string) (string, string, error) {
	switch {
	case strings.HasPrefix(s, "'''"):
		end := strings.Index(s[3:], "'''")
		if end < 0 {
			return "", "", fmt.Errorf("unterminated ''' string")
		}
		return s[3 : 3+end], s[3+end+3:], nil
	case strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 || strings.Contains(s[1:1+end], "\n") {
			return "", "", fmt.Errorf("unterminated ' string")
		}
		return s[1 : 1+end], s[1+end+1:], nil
	case strings.HasPrefix(s, `"`):
		end := strings.IndexByte(s[1:], '"')
		if end < 0 || strings.Contains(s[1:1+end], "\n") {
			return "", "", fmt.Errorf("unterminated \" string")
		}
		v := s[1 : 1+end]
		if strings.Contains(v, `\`) {
			return "", "", fmt.Errorf("escapes in basic strings are not supported: %q", v)
		}
		return v, s[1+end+1:], nil
	}
	return "", "", fmt.Errorf("expected a string, got %q", firstN(s, 20))
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
