// Package registry holds the use cases of a tenant's MCP servers: create,
// get, list, patch and delete (with the save-time address check of MC1 and
// the sealed credential), discovery, the allowlist save and the list of a
// server's calls. One handler per use case, Handle(ctx, principal, command).
package registry
