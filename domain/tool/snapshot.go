package tool

// Snapshot is one allowlisted tool as the admin approved it: built from a
// live discovery, never from a client request.
type Snapshot struct {
	name string
}

// Name is the tool's name on its server.
func (s Snapshot) Name() string { return s.name }
