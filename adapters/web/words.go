package web

import (
	"fmt"
	"sort"
	"strings"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/poison"
	"github.com/codelotse/codelotse/domain/server"
)

// The words of refusals. The use cases answer with the contract's codes
// and messages, written for API clients (field names, JSON, patterns).
// A page says the same in the admin's words: no code, pattern or JSON in
// the main message; the code follows in small print for support. An
// operator setting is named only in a sentence that says an operator
// must change it.

// codeWords is the main message of a refusal, by code.
var codeWords = map[app.Code]string{
	app.CodeBadJSON:                 "The form could not be read. Reload the page and try again.",
	app.CodeUnauthenticated:         "This token is not valid, or the session has ended. Sign in again.",
	app.CodeForbidden:               "Your token does not allow this.",
	app.CodeNotFound:                "This item no longer exists in your organisation.",
	app.CodeNameTaken:               "Another server already has this name. Choose another one.",
	app.CodeTooManyServers:          "Your organisation has registered the most servers it may. Delete one first.",
	app.CodeDiscoveryThrottled:      "The tools were fetched or tested a moment ago. Wait a little and try again.",
	app.CodeValidationFailed:        "Some fields need a change before this can be saved.",
	app.CodeNotSignedOff:            "MCP context awaits the security sign-off: nothing can be changed yet.",
	app.CodeInstanceDisabled:        "MCP context is switched off on this instance: an operator must allow it before anything can be changed.",
	app.CodeEndpointNotPublic:       "This address cannot be used: its host must resolve to public internet addresses only. If it is an internal server, an operator must allow its host name on this instance.",
	app.CodeAcknowledgementRequired: "Tick the confirmation that search terms are sent to this server.",
	app.CodeCredentialRequired:      "Moving the server to another host (or an OAuth server to another URL) needs its authentication again: choose it and paste the secret.",
	app.CodeUnknownTool:             "The server no longer offers this tool as it was shown. Discover the tools again and choose from the new list.",
	app.CodeUnsupportedSchema:       "This tool cannot be selected: its input is more complex than CodeLotse can check.",
	app.CodeWriteNotConfirmed:       "This tool may change data: tick the write confirmation to allow reviews to call it.",
	app.CodeTooManyTools:            fmt.Sprintf("Select at most %d tools.", limits.MaxToolsPerServer),
	app.CodeUnknownServer:           "One of the selected servers no longer exists. Reload the page and choose again.",
	app.CodePublicRepository:        "MCP context cannot be turned on for a public repository: switch the mode off or make the repository private.",
	app.CodeKeysUnavailable:         "Secrets cannot be stored on this instance yet: an operator must configure its encryption keys.",
	app.CodeServerUnreachable:       "The server could not be reached. Check the address, or try again later.",
	app.CodeServerUnauthorized:      "The server refused the credential. Check the token or the OAuth settings.",
	app.CodeProtocolError:           "The server did not answer as an MCP server should. Check the address (it must be the MCP endpoint).",
	app.CodeResponseTooLarge:        "The server's answer was larger than allowed.",
	app.CodeTimeout:                 "The server did not answer in time. Try again later.",
	app.CodeUnavailable:             "The service cannot reach its database right now. Try again in a few seconds.",
	app.CodeInternal:                "Something went wrong on our side. It has been logged; try again later.",
}

// fieldLabels name the fields of the forms as their labels do.
var fieldLabels = map[string]string{
	"name": "Name", "url": "URL", "acknowledged": "Confirmation",
	"auth": "Authentication", "auth.type": "Authentication", "auth.token": "Bearer token",
	"auth.name": "Header name", "auth.value": "Header value", "auth.tokenUrl": "Token URL",
	"auth.clientId": "Client id", "auth.clientSecret": "Client secret", "auth.scopes": "Scopes", "auth.issuer": "Issuer",
	"mcp.mode": "Mode", "mcp.servers": "MCP servers", "mcp.maxCalls": "Calls per review", server.FieldMaxCallsPerMinute: "Calls per minute",
	"visibility": "Visibility", "retentionDays": "Retention", "token": "API token",
	"debugPrompts.ttlHours": "Keep prompt logs for", "debugPrompts.enabled": "Debug prompt logs",
}

// confirmFindingsWords is the refusal of a tool with findings saved or
// approved without their confirmation.
const confirmFindingsWords = "Read the findings of this tool, then tick their confirmation: its definition may carry instructions for the model."

// findingWords name the findings of the poisoning rules (MC4), by code.
var findingWords = map[string]string{
	poison.HiddenCharacters: "hidden characters",
	poison.Instruction:      "instructions to the model",
	poison.OtherTool:        "names another server's tool",
	poison.EncodedPayload:   "encoded text",
	poison.SecretRequest:    "asks for secrets or files",
	poison.URL:              "links to another host",
	poison.Padding:          "text hidden after blank space",
}

// fieldWords are whole sentences for reasons whose contract text names a
// pattern or a value type; keyed by field.
var fieldWords = map[string]string{
	"auth.name":       "The header name must start with x- and use only lowercase letters, digits and dashes (at most 64 characters).",
	"auth.type":       "Choose one of the kinds of authentication.",
	"confirmFindings": confirmFindingsWords,
}

// reasonWords are sentences for whole contract reasons that name an
// operator setting or a protocol.
var reasonWords = map[string]string{
	"is required: this instance does not allow dynamic client registration at this authorization server (QUAVON_MCP_OAUTH_DCR_ISSUERS)": "Fill in the client id: this instance may not use dynamic client registration at this authorization server. " +
		"An operator must allow it (the setting QUAVON_MCP_OAUTH_DCR_ISSUERS) if you want the client registered when connecting.",
	"is required: the authorization server offers no dynamic client registration": "Fill in the client id: the authorization server offers no dynamic client registration.",
	server.OutsideAllowlistReason: "This URL is outside the operator's allowlist of MCP server URLs: use a URL it allows, or ask an operator to add it (the setting QUAVON_MCP_ALLOWED_URLS).",
}

// fieldIDs are the inputs a field's error links to.
var fieldIDs = map[string]string{
	"name": "name", "url": "url", "acknowledged": "acknowledged",
	"auth": "auth-kind", "auth.type": "auth-kind", "auth.token": "token",
	"auth.name": "header_name", "auth.value": "header_value", "auth.tokenUrl": "token_url",
	"auth.clientId": "client_id", "auth.clientSecret": "client_secret", "auth.scopes": "scopes", "auth.issuer": "issuer",
	"mcp.mode": "mode", "mcp.servers": "servers", "mcp.maxCalls": "maxCalls", server.FieldMaxCallsPerMinute: "maxCallsPerMinute",
	"visibility": "visibility", "token": "token", "retentionDays": "retentionDays",
	"debugPrompts.enabled": "debugPrompts", "debugPrompts.ttlHours": "ttlHours",
}

// fieldOrder is the order of the fields on the forms, for the summary.
var fieldOrder = []string{"name", "url", server.FieldMaxCallsPerMinute, "auth", "auth.type", "auth.token", "auth.name", "auth.value", "auth.tokenUrl",
	"auth.clientId", "auth.issuer", "auth.clientSecret", "auth.scopes", "acknowledged", "mcp.mode", "mcp.servers", "mcp.maxCalls"}

// sayField turns a field's contract reason into a sentence: a known
// sentence, else the label followed by the reason ("URL must use
// https"), with a reason that quotes a pattern or JSON replaced.
func sayField(field, reason string) string {
	if reason == "" {
		return ""
	}
	if field == server.FieldMaxCallsPerMinute {
		return callLimitWords(reason)
	}
	if w, ok := fieldWords[field]; ok && !strings.HasPrefix(reason, "is required") {
		return w
	}
	label, ok := fieldLabels[field]
	if !ok {
		label = "This field"
	}
	if strings.ContainsAny(reason, "^${}\"") {
		return label + " is not in a form this field accepts."
	}
	if w, ok := reasonWords[reason]; ok {
		return w
	}
	reason = strings.TrimSuffix(reason, ".")
	if rest, ok := strings.CutPrefix(reason, "is required"); ok {
		if len(label) > 1 && strings.ToLower(label[1:2]) == label[1:2] {
			label = strings.ToLower(label[:1]) + label[1:] // "Name" → "name", "URL" stays
		}
		if rest != "" && !strings.HasPrefix(rest, ":") {
			rest = ": it is required" + rest // "is required with a client secret"
		}
		return "Fill in the " + label + rest + "."
	}
	return label + " " + reason + "."
}

// callLimitWords says a refused calls-per-minute limit: above the
// instance's cap (an operator's setting), or not 1 to 600.
func callLimitWords(reason string) string {
	if strings.Contains(reason, "QUAVON_MCP_MAX_CALLS_PER_MINUTE") {
		return "Calls per minute is above this instance's limit: choose a lower number, or ask an operator to raise it (the setting QUAVON_MCP_MAX_CALLS_PER_MINUTE)."
	}
	return fmt.Sprintf("Calls per minute must be a whole number from 1 to %d, or empty for no limit.", limits.MaxCallsPerMinute)
}

// summaryItem is one link of an error summary.
type summaryItem struct {
	Href string
	Text string
}

// Words is the refusal's main message in the admin's words.
func (f *formError) Words() string {
	if f == nil {
		return ""
	}
	if w, ok := codeWords[app.Code(f.Code)]; ok {
		return w
	}
	return "The request was refused."
}

// Summary lists the field errors in the order of the form, each linking
// to its input; errors next to a button (not a field) are listed without
// a link of their own but to the form.
func (f *formError) Summary() []summaryItem {
	if f == nil {
		return nil
	}
	keys := make([]string, 0, len(f.Fields))
	for k := range f.Fields {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		for i, o := range fieldOrder {
			if o == k {
				return i
			}
		}
		return len(fieldOrder)
	}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	out := make([]summaryItem, 0, len(keys))
	for _, k := range keys {
		id, ok := fieldIDs[k]
		if !ok {
			continue // a refusal next to a button: the main message says it
		}
		text := f.Said(k).Text
		if label, ok := fieldLabels[k]; ok && text == f.Words() {
			text = label + ": " + text // the headline again: say which field
		}
		out = append(out, summaryItem{Href: "#" + id, Text: text})
	}
	return out
}
