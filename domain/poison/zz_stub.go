package poison

import "github.com/codelotse/codelotse/domain/tool"

// TEMPORARY wiring stub, replaced by the rule set.

const (
	HiddenCharacters = "hidden_characters"
	Instruction      = "instruction"
	OtherTool        = "other_tool"
	EncodedPayload   = "encoded_payload"
	SecretRequest    = "secret_request"
	URL              = "url"
	Padding          = "padding"
)

type Finding struct{ Code, Excerpt string }

type Context struct {
	ServerHost string
	ServerName string
	OwnTools   []string
	OtherTools []string
	Redact     func(string) string
}

type Field struct{ Where, Text string }

func Scan(d tool.Definition, c Context) []Finding {
	return ScanTexts([]Field{{"description", d.Description()}}, c)
}

func ScanTexts(fields []Field, c Context) []Finding {
	for _, f := range fields {
		if len(f.Text) > 0 && (contains(f.Text, "<IMPORTANT>")) {
			e := f.Text
			if c.Redact != nil {
				e = c.Redact(e)
			}
			return []Finding{{Instruction, e}}
		}
	}
	return nil
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
