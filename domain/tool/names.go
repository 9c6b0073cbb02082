package tool

import (
	"strconv"

	"github.com/codelotse/codelotse/domain/limits"
)

// modelToolPrefix marks tools from MCP servers in the model's tool list.
const modelToolPrefix = "mcp_"

// ModelToolName returns the name the model sees for tool on server:
// mcp_<server>_<tool>. Model APIs accept only [A-Za-z0-9_-] and at most
// [limits.MaxModelToolNameLen] characters, so anything else is a
// [*NameError] ("unsupported name: …" or "name too long: …") rather than a
// silently rewritten name that could collide with another tool.
//
// Server names may contain underscores, so mcp_a_b_c can come from server
// "a_b" with tool "c" or server "a" with tool "b_c": callers that offer
// tools of several servers must refuse duplicates among the results.
func ModelToolName(server, tool string) (string, error) {
	if server == "" || tool == "" {
		return "", &NameError{Server: server, Tool: tool, Reason: "unsupported name: empty"}
	}
	name := modelToolPrefix + server + "_" + tool
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", &NameError{Server: server, Tool: tool, Reason: "unsupported name: only letters, digits, _ and - are allowed"}
		}
	}
	if len(name) > limits.MaxModelToolNameLen {
		return "", &NameError{Server: server, Tool: tool, Reason: "name too long: more than " + strconv.Itoa(limits.MaxModelToolNameLen) + " characters with prefix"}
	}
	return name, nil
}
