package tool

import "testing"

// TestPlainWord: the word-at-a-time test of needsStrip agrees with the
// byte-at-a-time one for every byte at every position.
func TestPlainWord(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c >= 0x20 && c <= 0x7e
		for pos := 0; pos < 8; pos++ {
			b := []byte("Ab3 ~x]_")
			b[pos] = byte(c)
			if got := plainWord(string(b)); got != want {
				t.Fatalf("plainWord with byte %#x at %d = %t, want %t", c, pos, got, want)
			}
		}
	}
}
