package tool

import (
	"errors"
	"strings"
)

// Assessment is the discovery verdict on one live tool, as the API lists
// it. It is a computed result value: its fields are exported for
// presentation, and changing them changes nothing that is stored.
type Assessment struct {
	// Definition is the tool as the server reported it.
	Definition Definition
	// Supported is true when the tool could be allowlisted: a supported
	// schema and a valid model-facing name.
	Supported bool
	// Reason says why not when Supported is false ("unsupported schema: …",
	// "name too long: …", "unsupported name: …"); empty otherwise.
	Reason string
	// Warning says, for a supported tool, what the admin should know
	// before allowlisting it ([Schema.Warnings], joined by "; "): calls
	// that would always be blocked or refused, formats not checked. Empty
	// when there is nothing to say.
	Warning string
	// WriteCapable is [WriteCapable] of the definition.
	WriteCapable bool
	// Hash is [Hash] of the definition.
	Hash string
}

// Assess combines the rules a tool must pass to be allowlisted on the
// server named serverName: the model-name rule first (without a name the
// model cannot call the tool at all), then the schema rule.
func Assess(serverName string, d Definition) Assessment {
	a := Assessment{Definition: d, Supported: true, WriteCapable: WriteCapable(d), Hash: Hash(d)}
	if _, err := ModelToolName(serverName, d.name); err != nil {
		a.Supported, a.Reason = false, reasonOf(err)
		return a
	}
	s, err := d.checkedSchema()
	if err != nil {
		a.Supported, a.Reason = false, reasonOf(err)
		return a
	}
	a.Warning = strings.Join(s.Warnings(), "; ")
	return a
}

func reasonOf(err error) string {
	var ue *UnsupportedError
	if errors.As(err, &ue) {
		return ue.Reason
	}
	var ne *NameError
	if errors.As(err, &ne) {
		return ne.Reason
	}
	return err.Error()
}
