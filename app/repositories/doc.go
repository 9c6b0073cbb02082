// Package repositories holds the use cases of a tenant's repositories:
// create, get, update and list them, and read and write their MCP policy
// and the tenant default it inherits from.
package repositories
