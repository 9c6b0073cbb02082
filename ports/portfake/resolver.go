package portfake

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
)

// Resolver answers from a table; a host not in it does not resolve.
type Resolver struct {
	mu      sync.Mutex
	Addrs   map[string][]netip.Addr
	Lookups []string
}

func (f *Resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Lookups = append(f.Lookups, host)
	a, ok := f.Addrs[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	return a, nil
}
