module github.com/codelotse/codelotse/loadtest

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/tsenart/vegeta/v12 v12.13.0
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

require (
	github.com/codelotse/codelotse v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

// The service itself, for the loopback MCP servers' test CA.
replace github.com/codelotse/codelotse => ../
