package tool

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
)

// Snapshot is one allowlisted tool as the admin approved it: built from a
// live discovery, never from a client request (MC4). It pins the hash of
// the live definition so later changes are detected by [Snapshot.Matches].
type Snapshot struct {
	name         string
	description  string
	schema       Schema
	annotations  []byte
	writeCapable bool
	hash         string
	approvedAt   time.Time
	// serverDescription is the server's own description of the approved
	// definition (the schema and annotations are above), kept so a later
	// change can be shown against what the server said then. Snapshots
	// stored before it was kept have none (hasServerDefinition false).
	serverDescription   string
	hasServerDefinition bool
}

// NewSnapshot approves d, just discovered on the server named serverName,
// with the admin's description. It refuses a definition whose schema is
// unsupported ([*UnsupportedError]) or whose model-facing name cannot be
// built ([*NameError]), an admin description longer than
// [limits.MaxToolDescriptionLen] characters and a zero approval time
// ([*field.Error]). The stored description is the sanitised admin text; the
// hash is computed from d itself. Whether a write-capable tool was
// confirmed by the admin is the caller's check (write_not_confirmed); see
// [Snapshot.WriteCapable].
func NewSnapshot(serverName string, d Definition, adminDescription string, approvedAt time.Time) (Snapshot, error) {
	if _, err := ModelToolName(serverName, d.name); err != nil {
		return Snapshot{}, err
	}
	schema, err := d.checkedSchema()
	if err != nil {
		return Snapshot{}, err
	}
	if utf8.RuneCountInString(adminDescription) > limits.MaxToolDescriptionLen {
		return Snapshot{}, &field.Error{Field: "description", Reason: "longer than " + strconv.Itoa(limits.MaxToolDescriptionLen) + " characters"}
	}
	if approvedAt.IsZero() {
		return Snapshot{}, &field.Error{Field: "approvedAt", Reason: "must be set"}
	}
	return Snapshot{
		name:         d.name,
		description:  SanitizeDescription(adminDescription),
		schema:       schema,
		annotations:  clone(d.annotations),
		writeCapable: WriteCapable(d),
		hash:         Hash(d),
		approvedAt:   approvedAt,

		serverDescription:   d.description,
		hasServerDefinition: true,
	}, nil
}

// UnmarshalSnapshotFromDatabase rebuilds a stored snapshot. It is for
// storage adapters only; everything else must use [NewSnapshot]. It still
// refuses state that could not have been approved: an empty name, a schema
// that is no longer supported (condition 4 of the threat analysis), invalid
// annotations or a malformed hash. The description is sanitised again and
// writeCapable is true if either the stored flag or the stored annotations
// say so, so a damaged row can only make a tool more restricted.
func UnmarshalSnapshotFromDatabase(
	name, description string,
	inputSchema, annotations json.RawMessage,
	writeCapable bool,
	hash string,
	approvedAt time.Time,
) (Snapshot, error) {
	if name == "" || !utf8.ValidString(name) {
		return Snapshot{}, &field.Error{Field: "name", Reason: "must be non-empty UTF-8"}
	}
	schema, err := CheckSchema(inputSchema)
	if err != nil {
		return Snapshot{}, err
	}
	ann, h, err := canonicalAnnotations(annotations)
	if err != nil {
		return Snapshot{}, &field.Error{Field: "annotations", Reason: err.Error()}
	}
	if !validHash(hash) {
		return Snapshot{}, &field.Error{Field: "hash", Reason: "must be 64 lowercase hex digits"}
	}
	if approvedAt.IsZero() {
		return Snapshot{}, &field.Error{Field: "approvedAt", Reason: "must be set"}
	}
	return Snapshot{
		name:         name,
		description:  SanitizeDescription(description),
		schema:       schema,
		annotations:  ann,
		writeCapable: writeCapable || h.writeCapable(),
		hash:         hash,
		approvedAt:   approvedAt,
	}, nil
}

// WithServerDescription is for storage adapters only: it restores the
// server's description of the approved definition (see
// [Snapshot.ServerDefinition]) on a snapshot read back with
// [UnmarshalSnapshotFromDatabase]. The description is kept only when it
// is the one the pinned hash covers, with the stored name, schema and
// annotations; otherwise (a damaged or tampered row) the snapshot stays
// without a server definition, so the admin is never shown an approved
// text the pin does not vouch for.
func (s Snapshot) WithServerDescription(description string) Snapshot {
	d, err := NewDefinition(s.name, description, s.schema.Canonical(), s.annotations)
	if err != nil || Hash(d) != s.hash {
		return s
	}
	s.serverDescription, s.hasServerDefinition = description, true
	return s
}

// ServerDefinition is the definition as the server sent it when the tool
// was approved: its description, its input schema and its annotations
// (in canonical form, the form the pinned hash covers). ok is false for a
// snapshot stored before the server's description was kept.
func (s Snapshot) ServerDefinition() (d Definition, ok bool) {
	if !s.hasServerDefinition {
		return Definition{}, false
	}
	d, err := NewDefinition(s.name, s.serverDescription, s.schema.Canonical(), s.annotations)
	if err != nil {
		return Definition{}, false
	}
	return d, true
}

// Name is the tool's name on its server.
func (s Snapshot) Name() string { return s.name }

// Description is the sanitised admin description; the model sees it
// through [ModelDescription].
func (s Snapshot) Description() string { return s.description }

// InputSchema returns a copy of the canonical input schema as discovered.
func (s Snapshot) InputSchema() json.RawMessage { return s.schema.Canonical() }

// Schema is the parsed supported schema, for [Schema.Validate] and
// [Schema.ModelSchema].
func (s Snapshot) Schema() Schema { return s.schema }

// Annotations returns a copy of the canonical annotations, or nil if the
// server sent none.
func (s Snapshot) Annotations() json.RawMessage { return clone(s.annotations) }

// WriteCapable reports whether the tool's annotations allow writes
// ([WriteCapable]); such a tool needs the admin's confirmWrite.
func (s Snapshot) WriteCapable() bool { return s.writeCapable }

// Hash is the pinned [Hash] of the definition approved.
func (s Snapshot) Hash() string { return s.hash }

// ApprovedAt is when the admin saved the allowlist.
func (s Snapshot) ApprovedAt() time.Time { return s.approvedAt }

// Matches reports whether live, as listed again at the start of a review,
// is the definition that was approved: same name, description, schema and
// annotations (MC4). A tool that does not match must not be offered.
func (s Snapshot) Matches(live Definition) bool {
	return s.hash != "" && Hash(live) == s.hash
}
