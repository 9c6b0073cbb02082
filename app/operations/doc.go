// Package operations holds the operator's jobs: rotating the encryption
// keys of credentials and prompt logs, and deleting expired rows.
package operations
