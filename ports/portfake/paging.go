package portfake

import (
	"slices"
	"strings"
)

// pageAfter is one page of keyset paging: the items whose key sorts after
// after, in key order (bytes), at most limit.
func pageAfter[T any](items []T, key func(T) string, after string, limit int) []T {
	var out []T
	for _, it := range items {
		if key(it) > after {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(x, y T) int { return strings.Compare(key(x), key(y)) })
	return firstN(out, limit)
}

// firstN returns at most the first n items (none for n ≤ 0).
func firstN[T any](items []T, n int) []T { return items[:max(0, min(n, len(items)))] }
