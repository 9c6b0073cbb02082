package server

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
)

// ToolState is an allowlisted tool's state as of the last time the
// server's tools were listed (a discovery, an allowlist save, an approval
// or a review run).
type ToolState string

// The states of an allowlisted tool, spelt as the API's ToolSnapshot.state.
const (
	// ToolPinned: the server lists the tool with the approved definition.
	ToolPinned ToolState = "pinned"
	// ToolChanged: the server listed a definition other than the approved
	// one (or one that could not be read). The tool is blocked until the
	// admin approves it again or removes it, whatever later listings show:
	// a server that changes a tool back has still changed it once.
	ToolChanged ToolState = "changed"
	// ToolGone: the server no longer lists the tool.
	ToolGone ToolState = "gone"
)

// ToolStatus is an allowlisted tool's state and, for a changed tool, the
// definition the server listed when the change was last seen.
type ToolStatus struct {
	State ToolState
	// Live is the changed definition as last listed; nil when it could
	// not be read, and for the other states.
	Live *tool.Definition
}

// LiveTool is one tool a server listed: its name and its definition, or
// Readable false when the definition could not be read.
type LiveTool struct {
	Name       string
	Definition tool.Definition
	Readable   bool
}

// ErrToolNotAllowlisted: an approval named a tool that is not in the
// allowlist (select and save it instead).
var ErrToolNotAllowlisted = errors.New("the tool is not in the allowlist")

// ToolStatus is the state of the allowlisted tool name; pinned for a
// tool that was never seen otherwise.
func (s *Server) ToolStatus(name string) ToolStatus {
	st, ok := s.states[name]
	if !ok {
		return ToolStatus{State: ToolPinned}
	}
	return cloneStatus(st)
}

// ChangedTools are the names of the allowlisted tools in state changed,
// in allowlist order.
func (s *Server) ChangedTools() []string {
	var out []string
	for _, t := range s.tools {
		if s.states[t.Name()].State == ToolChanged {
			out = append(out, t.Name())
		}
	}
	return out
}

// Listed are the names the server listed at the last successful
// discovery or allowlist save, sorted; ok is false when none was recorded
// (never discovered, or the URL changed since).
func (s *Server) Listed() (names []string, ok bool) {
	if s.listed == nil {
		return nil, false
	}
	return slices.Clone(s.listed), true
}

// NewOnServer are the tools the server listed at the last discovery that
// are not in the allowlist, sorted.
func (s *Server) NewOnServer() []string {
	var out []string
	for _, n := range s.listed {
		if !slices.ContainsFunc(s.tools, func(t tool.Snapshot) bool { return t.Name() == n }) {
			out = append(out, n)
		}
	}
	return out
}

// ObserveTools records what a full listing of the server's tools showed:
// for each allowlisted tool, pinned when the server lists the approved
// definition, changed when it lists another one (or one that could not be
// read), gone when it lists none. A changed tool stays changed (its Live
// definition updated) until [Server.ApproveTool] or its removal. The
// listed names are kept for [Server.NewOnServer]. It returns the names
// that turned changed with this listing.
func (s *Server) ObserveTools(live []LiveTool) (newlyChanged []string) {
	byName := make(map[string]LiveTool, len(live))
	names := make([]string, 0, len(live))
	for _, lt := range live {
		if _, dup := byName[lt.Name]; !dup {
			names = append(names, lt.Name)
		}
		byName[lt.Name] = lt
	}
	slices.Sort(names)
	states := map[string]ToolStatus{}
	for _, snap := range s.tools {
		prev := s.ToolStatus(snap.Name())
		lt, listed := byName[snap.Name()]
		var next ToolStatus
		switch {
		case listed && (!lt.Readable || !snap.Matches(lt.Definition)):
			next = ToolStatus{State: ToolChanged, Live: liveOf(lt)}
		case prev.State == ToolChanged && listed:
			next = ToolStatus{State: ToolChanged, Live: liveOf(lt)}
		case prev.State == ToolChanged:
			next = prev
		case !listed:
			next = ToolStatus{State: ToolGone}
		default:
			next = ToolStatus{State: ToolPinned}
		}
		if next.State == ToolChanged && prev.State != ToolChanged {
			newlyChanged = append(newlyChanged, snap.Name())
		}
		if next.State != ToolPinned {
			states[snap.Name()] = next
		}
	}
	s.states = states
	s.listed = names
	return newlyChanged
}

// MarkChanged records that the allowlisted tool name was listed with
// another definition than the approved one (live nil: unreadable), as a
// review run finds it. It does nothing for a tool not in the allowlist.
func (s *Server) MarkChanged(name string, live *tool.Definition) {
	if !slices.ContainsFunc(s.tools, func(t tool.Snapshot) bool { return t.Name() == name }) {
		return
	}
	states := maps.Clone(s.states)
	if states == nil {
		states = map[string]ToolStatus{}
	}
	var l *tool.Definition
	if live != nil {
		d := *live
		l = &d
	}
	states[name] = ToolStatus{State: ToolChanged, Live: l}
	s.states = states
}

// MarkListedChanged records, as a review run does, what a listing shows
// of the allowlisted tools it names: a tool listed with a definition that
// no longer matches its pin (or one that could not be read), and a tool
// already changed (its Live definition updated: it stays blocked even when
// the server changes it back), is marked changed ([Server.MarkChanged]);
// when any is, lastError becomes tool_changed. A tool the listing does not
// name, or names with its pinned definition while pinned, is left alone.
// It returns the names it marked, in the listing's order.
func (s *Server) MarkListedChanged(live []LiveTool) (marked []string) {
	for _, lt := range live {
		for _, snap := range s.tools {
			if snap.Name() != lt.Name {
				continue
			}
			if lt.Readable && snap.Matches(lt.Definition) && s.ToolStatus(lt.Name).State != ToolChanged {
				continue
			}
			s.MarkChanged(lt.Name, liveOf(lt))
			if !slices.Contains(marked, lt.Name) {
				marked = append(marked, lt.Name)
			}
		}
	}
	if len(marked) > 0 {
		s.RecordError(lastErrorToolChanged)
	}
	return marked
}

func liveOf(lt LiveTool) *tool.Definition {
	if !lt.Readable {
		return nil
	}
	d := lt.Definition
	return &d
}

func cloneStatus(st ToolStatus) ToolStatus {
	if st.Live != nil {
		d := *st.Live
		st.Live = &d
	}
	return st
}

// ApproveTool replaces the allowlisted tool of snap's name by snap, built
// from a live definition the admin approved, and sets it pinned. Every
// other tool, its snapshot and its state, stays as it is. A tool not in
// the allowlist is [ErrToolNotAllowlisted].
func (s *Server) ApproveTool(snap tool.Snapshot, now time.Time) error {
	i := slices.IndexFunc(s.tools, func(t tool.Snapshot) bool { return t.Name() == snap.Name() })
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrToolNotAllowlisted, snap.Name())
	}
	tools := slices.Clone(s.tools)
	tools[i] = snap
	s.tools = tools
	states := maps.Clone(s.states)
	delete(states, snap.Name())
	s.states = states
	s.updatedAt = now
	return nil
}

// RemoveTool takes the tool name off the allowlist, with its state;
// every other tool stays as it is. A tool not in the allowlist is
// [ErrToolNotAllowlisted].
func (s *Server) RemoveTool(name string, now time.Time) error {
	i := slices.IndexFunc(s.tools, func(t tool.Snapshot) bool { return t.Name() == name })
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrToolNotAllowlisted, name)
	}
	s.tools = slices.Delete(slices.Clone(s.tools), i, i+1)
	states := maps.Clone(s.states)
	delete(states, name)
	s.states = states
	s.updatedAt = now
	return nil
}

// ReplaceTools stores a new allowlist built from a live discovery. The
// snapshots are validated by package tool; here only their number is
// limited. A tool that keeps its pinned hash keeps its state (a changed
// tool the caller kept as stored stays changed); every other tool is
// pinned.
func (s *Server) ReplaceTools(tools []tool.Snapshot, now time.Time) error {
	if len(tools) > limits.MaxToolsPerServer {
		return fmt.Errorf("%w: at most %d", ErrTooManyTools, limits.MaxToolsPerServer)
	}
	states := map[string]ToolStatus{}
	for _, t := range tools {
		old := slices.IndexFunc(s.tools, func(o tool.Snapshot) bool { return o.Name() == t.Name() })
		if st, ok := s.states[t.Name()]; ok && old >= 0 && s.tools[old].Hash() == t.Hash() {
			states[t.Name()] = st
		}
	}
	s.tools = append([]tool.Snapshot{}, tools...)
	s.states = states
	s.updatedAt = now
	return nil
}

// RestoreToolStatesFromDatabase is for storage adapters only: it sets
// the stored states of the allowlisted tools (names not in the allowlist
// and pinned states are dropped) and the names of the last listing (nil:
// none recorded).
func (s *Server) RestoreToolStatesFromDatabase(states map[string]ToolStatus, listed []string) {
	out := map[string]ToolStatus{}
	for name, st := range states {
		if st.State == ToolPinned || !slices.ContainsFunc(s.tools, func(t tool.Snapshot) bool { return t.Name() == name }) {
			continue
		}
		if st.State != ToolGone {
			// A damaged state can only block a tool, never free it.
			st.State = ToolChanged
		}
		out[name] = cloneStatus(st)
	}
	s.states = out
	s.listed = nil
	if listed != nil {
		s.listed = append(make([]string, 0, len(listed)), listed...)
		slices.Sort(s.listed)
	}
}
