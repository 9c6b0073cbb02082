package rules

import "net/netip"

// Loopback judges an address value; the domain never resolves names.
func Loopback(a netip.Addr) bool { return a.IsLoopback() }
