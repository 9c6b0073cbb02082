// Package accounts holds the use cases of tenants and their access:
// creating tenants and tokens, authenticating a bearer token, web
// sessions, the tenant's settings and its audit log.
package accounts
