// Package tool holds the rules for MCP tool definitions: the canonical JSON
// form of an input schema, the pinning hash, the supported-schema check,
// strict argument validation, model-facing names and descriptions.
//
// Everything a server reports is untrusted (threat analysis MC4, MC7): a
// [Definition] is parsed strictly, pinned with [Hash] when the admin
// approves it as a [Snapshot], and checked again with [Snapshot.Matches] on
// every review. Only flat schemas of scalars are supported ([CheckSchema]);
// the model sees a reduced schema ([Schema.ModelSchema]) and the admin's
// sanitised description ([ModelDescription]), never the server's text.
//
// The package is pure: no I/O, no clock, no logging. The hash framing is
// described in docs/TOOL-HASH.md.
package tool
