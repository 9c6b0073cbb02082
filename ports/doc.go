// Package ports declares the interfaces the application needs from the
// outside world (driven ports) and the ones it offers (driving ports). Each
// is named after what its consumer needs and documents its concurrency rules.
package ports
