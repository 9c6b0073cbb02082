package secrets

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// ruleSpec is one [[rules]] table of gitleaks.toml, before compilation.
type ruleSpec struct {
	ID          string      `toml:"id"`
	Description string      `toml:"description"`
	Regex       string      `toml:"regex"`
	Path        string      `toml:"path"`
	SecretGroup int         `toml:"secretGroup"`
	Entropy     float64     `toml:"entropy"`
	Keywords    []string    `toml:"keywords"`
	Allowlists  []allowSpec `toml:"allowlists"`
}

// allowSpec is one allowlist table, global ([allowlist]) or per rule
// ([[rules.allowlists]]).
type allowSpec struct {
	Description string   `toml:"description"`
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	Paths       []string `toml:"paths"`
	StopWords   []string `toml:"stopwords"`
}

// configSpec is the parsed gitleaks.toml. The title, minVersion and
// description fields are read only so that strict decoding accepts them.
type configSpec struct {
	Title       string     `toml:"title"`
	MinVersion  string     `toml:"minVersion"`
	Description string     `toml:"description"`
	Global      allowSpec  `toml:"allowlist"`
	Rules       []ruleSpec `toml:"rules"`
}

// parseConfig reads gitleaks' generated config/gitleaks.toml with
// go-toml. Every key it holds must have a field above: an unknown key or
// table (a rule file update that uses more of gitleaks' format, such as
// [extend] or a new rule key) is an error rather than silently dropped
// rules, so it fails loudly at init and in the tests; so is a rule without
// an id or without a regex or path (as gitleaks' own loader refuses it),
// which also catches a [[rules.allowlists]] with no [[rules]] before it.
// benchcompare cross-checks the result against gitleaks' own loader.
func parseConfig(src string) (configSpec, error) {
	var cfg configSpec
	dec := toml.NewDecoder(strings.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return configSpec{}, fmt.Errorf("gitleaks.toml: %s", strict.String())
		}
		return configSpec{}, fmt.Errorf("gitleaks.toml: %w", err)
	}
	for i, r := range cfg.Rules {
		if r.ID == "" {
			return configSpec{}, fmt.Errorf("gitleaks.toml: rule %d has no id", i+1)
		}
		if r.Regex == "" && r.Path == "" {
			return configSpec{}, fmt.Errorf("gitleaks.toml: rule %q has neither regex nor path", r.ID)
		}
	}
	return cfg, nil
}
