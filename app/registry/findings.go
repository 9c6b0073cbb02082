package registry

import (
	"context"

	"github.com/codelotse/codelotse/domain/poison"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// Findings reads the tool-poisoning rules (MC4, domain/poison) over the
// tools of a server. Its excerpts pass through the secret scanner, so a
// finding never repeats a secret the server put in its text.
type Findings struct {
	Secrets ports.SecretScanner
}

// NewFindings returns the reader.
func NewFindings(secrets ports.SecretScanner) *Findings { return &Findings{Secrets: secrets} }

// Scope is what the rules read besides a tool's own text: the names of
// the server's tools (naming a sibling is ordinary) and of the tenant's
// other servers' tools (naming one is shadowing).
type Scope struct {
	Own, Others []string
}

// Of returns the findings of one definition of s.
func (f *Findings) Of(s *server.Server, d tool.Definition, sc Scope) []poison.Finding {
	return poison.Scan(d, f.context(s, sc))
}

// OfText returns the findings of a tool whose definition could not be
// read: its name and description are all there is.
func (f *Findings) OfText(s *server.Server, name, description string, sc Scope) []poison.Finding {
	return poison.ScanTexts([]poison.Field{{Where: "name", Text: name}, {Where: "description", Text: description}}, f.context(s, sc))
}

// Stored returns the findings of a stored definition of s, shown with
// the server (serverDefinition): its scope is the server's own tools;
// the other servers' names are read where an admin confirms, at
// discovery.
func (f *Findings) Stored(s *server.Server, d tool.Definition) []poison.Finding {
	own := make([]string, 0, len(s.Tools()))
	for _, t := range s.Tools() {
		own = append(own, t.Name())
	}
	listed, _ := s.Listed()
	return f.Of(s, d, Scope{Own: append(own, listed...)})
}

func (f *Findings) context(s *server.Server, sc Scope) poison.Context {
	return poison.Context{
		ServerHost: s.URL().Host(), ServerName: s.Name().String(),
		OwnTools: sc.Own, OtherTools: sc.Others, Redact: f.redact,
	}
}

func (f *Findings) redact(text string) string {
	if found := f.Secrets.Scan(text); len(found) > 0 {
		return f.Secrets.Redact(text, found)
	}
	return text
}

// otherTools lists the tool names of the tenant's servers other than id,
// both as those servers name them and as the model is offered them, so a
// description that names one is read as shadowing (other_tool).
func otherTools(ctx context.Context, tx ports.TenantTx, id string) ([]string, error) {
	all, err := tx.Servers().List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range all {
		if o.ID() == id {
			continue
		}
		names, _ := o.Listed()
		for _, t := range o.Tools() {
			names = append(names, t.Name())
		}
		for _, n := range names {
			out = append(out, n)
			if m, err := tool.ModelToolName(o.Name().String(), n); err == nil {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// scope reads the Scope of a live listing of the server id: the listed
// names and, in its own tenant transaction, the other servers' names.
func (d DiscoveryDeps) scope(ctx context.Context, tenantID, id string, defs []ports.ListedTool) (Scope, error) {
	sc := Scope{Own: make([]string, len(defs))}
	for i, lt := range defs {
		sc.Own[i] = lt.Name
	}
	err := d.Tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		sc.Others, err = otherTools(ctx, tx, id)
		return err
	})
	if err != nil {
		return Scope{}, srvStoreError(err)
	}
	return sc, nil
}
