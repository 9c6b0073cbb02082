package rules

import "net"

func Lookup(h string) ([]string, error) { return net.LookupHost(h) }
