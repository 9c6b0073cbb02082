// Package portfake holds in-memory fakes of the ports, shared by the
// application modules' tests and by the port contract tests (which run
// the same suite against these fakes and against PostgreSQL). A fake keeps
// what it stores in exported fields, so a test can seed it and look into
// it. Fakes are not safe for concurrent use unless they say so; Tenants
// serialises the transactions it runs.
//
// One file per port: tenants.go (Tenants and its transaction), servers.go,
// repositories.go, policies.go, settings.go, reviews.go, calls.go,
// audit.go, promptlogs.go (the logs and their key rotator), oauth.go
// (pending connection states and the OAuth client), accounts.go,
// cipher.go (the cipher and the credential rotator), resolver.go,
// clock.go, scanner.go (a one-rule secret scanner); store.go wires them together as PostgreSQL's tables are, and
// paging.go holds the keyset paging they share.
package portfake
