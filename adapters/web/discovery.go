package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
)

// discoveryView is a live discovery shown on the server page: every tool
// with the selection form. Blob carries the discovered tools through a
// refused save so the page can be shown again with the user's choices;
// it is display data only: a save sends names, descriptions and
// confirmations, and the server is discovered again inside the save.
// Changed tools are shown (and approved) in the allowlist, from their
// stored state.
type discoveryView struct {
	Tools []toolRow
	Blob  string
	Error *formError
}

// toolRow is one discovered tool and the user's choice for it; State is
// its allowlist state ("" when not allowlisted).
type toolRow struct {
	registry.DiscoveredTool
	Selected        bool
	Description     string
	ConfirmWrite    bool
	ConfirmFindings bool
	Pinned          bool
	State           server.ToolState
	Error           string
}

func (u *UI) discover(w http.ResponseWriter, r *http.Request, c *caller) {
	tools, err := u.d.Discover.Handle(r.Context(), c.Principal, registry.DiscoverServer{ID: r.PathValue("id")})
	if err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) { p.ActionError = newFormError(err, "discover") })
		return
	}
	p, err := u.loadServerPage(r, c)
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	p.Discovery = newDiscoveryView(p.S, tools, nil)
	u.render(w, r, http.StatusOK, "server", c, p)
}

// newDiscoveryView builds the selection. Without choices (a fresh
// discovery) the pinned tools are selected with their approved
// descriptions, and other tools are offered with the server's description
// as the domain sanitises it, cut to the limit: what the model would see.
// A tool with findings (MC4) is offered with an empty description: the
// admin writes the model's text, so a save without reading cannot pass
// the server's poison on.
func newDiscoveryView(s *server.Server, tools []registry.DiscoveredTool, choices map[string]registry.ToolChoice) *discoveryView {
	pinned := map[string]tool.Snapshot{}
	for _, t := range s.Tools() {
		pinned[t.Name()] = t
	}
	v := &discoveryView{Blob: encodeBlob(tools)}
	for _, t := range tools {
		row := toolRow{DiscoveredTool: t}
		if len(t.Findings) == 0 {
			row.Description = tool.SanitizeDescription(t.Description)
		}
		if snap, ok := pinned[t.Name]; ok {
			row.Pinned, row.Selected, row.Description, row.ConfirmWrite = true, true, snap.Description(), snap.WriteCapable()
			row.State = s.ToolStatus(t.Name).State
		}
		if choices != nil {
			ch, ok := choices[t.Name]
			row.Selected, row.ConfirmWrite, row.ConfirmFindings = ok, ch.ConfirmWrite, ch.ConfirmFindings
			if ok {
				row.Description = ch.Description
			}
		}
		v.Tools = append(v.Tools, row)
	}
	return v
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// encodeBlob and decodeBlob carry a discovery through a form as base64
// of its JSON, so no server text, invisible characters included, lands
// raw in an attribute.
func encodeBlob(tools []registry.DiscoveredTool) string {
	b, err := json.Marshal(tools)
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeBlob(s string) []registry.DiscoveredTool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	var tools []registry.DiscoveredTool
	if json.Unmarshal(b, &tools) != nil {
		return nil
	}
	return tools
}

// saveTools saves the selection through the same use case as PUT
// …/tools: names, descriptions and write confirmations only.
func (u *UI) saveTools(w http.ResponseWriter, r *http.Request, c *caller) {
	id := r.PathValue("id")
	selected := r.PostForm["select"]
	choices := make([]registry.ToolChoice, 0, len(selected))
	byName := map[string]registry.ToolChoice{}
	for _, name := range selected {
		ch := registry.ToolChoice{Name: name, Description: r.PostForm.Get("desc:" + name), ConfirmWrite: r.PostForm.Get("confirm:"+name) == "on",
			ConfirmFindings: r.PostForm.Get("confirm_findings:"+name) == "on"}
		choices = append(choices, ch)
		byName[name] = ch
	}
	if len(choices) == 0 && r.PostForm.Get("confirm_empty") != "yes" {
		using, err := u.d.UsingServer.Handle(r.Context(), c.Principal, repositories.RepositoriesUsingServer{ServerID: id})
		if err != nil {
			u.internal(w, r, c, err)
			return
		}
		if len(using) > 0 {
			p, err := u.loadServerPage(r, c)
			if err != nil {
				u.refused(w, r, c, err, "message", nil)
				return
			}
			blob := r.PostForm.Get("discovery")
			if tools := decodeBlob(blob); len(tools) > 0 {
				p.Discovery = newDiscoveryView(p.S, tools, byName)
			}
			p.ConfirmEmpty = &confirmEmpty{Repositories: using, Blob: blob}
			u.render(w, r, http.StatusOK, "server", c, p)
			return
		}
	}
	if _, err := u.d.SaveTools.Handle(r.Context(), c.Principal, registry.SaveTools{ID: id, Tools: choices}); err != nil {
		u.showRefusal(w, r, c, err, func(p *serverPage) {
			tools := decodeBlob(r.PostForm.Get("discovery"))
			if len(tools) == 0 {
				p.ActionError = newFormError(err, "discover")
				return
			}
			p.Discovery = newDiscoveryView(p.S, tools, byName)
			p.Discovery.Error = newFormError(err, "save")
			for i, ch := range choices {
				reason := p.Discovery.Error.Field(fmt.Sprintf("tools[%d].description", i))
				if reason != "" {
					reason = "Description " + reason
				} else if p.Discovery.Error.Field(fmt.Sprintf("tools[%d].confirmFindings", i)) != "" {
					reason = confirmFindingsWords
				}
				for j := range p.Discovery.Tools {
					if p.Discovery.Tools[j].Name == ch.Name && reason != "" {
						p.Discovery.Tools[j].Error = reason
					}
				}
			}
		})
		return
	}
	http.Redirect(w, r, "/ui/servers/"+id+"?done=saved", http.StatusSeeOther)
}

// writeHint says why a tool counts as write-capable.
func writeHint(t registry.DiscoveredTool) string {
	if !t.WriteCapable {
		return "read-only"
	}
	if strings.Contains(string(t.Annotations), `"destructiveHint":true`) {
		return "destructive"
	}
	return "may change data (not marked read-only)"
}
