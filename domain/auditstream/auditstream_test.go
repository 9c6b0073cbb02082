package auditstream_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/auditstream"
)

// key returns n distinct bytes, so a decoder that drops or reorders one
// is seen.
func key(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

func std(n int) string { return base64.StdEncoding.EncodeToString(key(n)) }

func TestAuditParseSecretAccepts(t *testing.T) {
	// The secret of the Standard Webhooks libraries' own tests: 24 bytes.
	const libraryKey = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	libraryBytes, err := base64.StdEncoding.DecodeString(libraryKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		secret string
		want   []byte
	}{
		{"24 bytes, the least", "whsec_" + std(24), key(24)},
		{"32 bytes", "whsec_" + std(32), key(32)},
		{"64 bytes, the most", "whsec_" + std(64), key(64)},
		{"25 bytes, padded", "whsec_" + std(25), key(25)},
		{"63 bytes", "whsec_" + std(63), key(63)},
		{"the specification's example secret", "whsec_" + libraryKey, libraryBytes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := auditstream.ParseSecret(tt.secret)
			if err != nil {
				t.Fatalf("ParseSecret: %v", err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("key = %x, want %x", got, tt.want)
			}
		})
	}
}

func TestAuditParseSecretRefuses(t *testing.T) {
	k32 := std(32)
	urlOnly := base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xbf, 0xfe, 0xfb, 0xef}) // "-_-_-_-_"
	if !strings.ContainsAny(urlOnly, "-_") {
		t.Fatalf("fixture %q has no base64url-only character", urlOnly)
	}
	// urlOnly32 is 32 bytes whose base64url spelling has '-' and '_'
	// (0xfb 0xff 0xbf... encode to "-_-_").
	urlOnly32 := base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff, 0xbf, 0xfe}, 8))
	for _, tt := range []struct {
		name   string
		secret string
	}{
		{"empty", ""},
		{"prefix alone, nothing after it", "whsec_"},
		{"trailing line break", "whsec_" + k32 + "\n"},
		{"trailing CRLF", "whsec_" + k32 + "\r\n"},
		{"line break after the prefix", "whsec_\n" + k32},
		{"a second spelling of the key (unused bits set)", "whsec_" + k32[:len(k32)-2] + string(rune(k32[len(k32)-2]+1)) + "="},
		{"no prefix: raw base64", k32},
		{"upper-case prefix", "WHSEC_" + k32},
		{"mixed-case prefix", "Whsec_" + k32},
		{"prefix without underscore", "whsec" + k32},
		{"prefix with a dash", "whsec-" + k32},
		{"another vendor's prefix", "whpk_" + k32},
		{"prefix twice", "whsec_whsec_" + k32},
		{"23 bytes, one short", "whsec_" + std(23)},
		{"16 bytes", "whsec_" + std(16)},
		{"1 byte", "whsec_" + std(1)},
		{"65 bytes, one over", "whsec_" + std(65)},
		{"128 bytes", "whsec_" + std(128)},
		{"not base64", "whsec_" + strings.Repeat("!", 44)},
		{"base64 with a stray character", "whsec_" + k32[:10] + "*" + k32[11:]},
		{"padding removed", "whsec_" + strings.TrimRight(k32, "=")},
		{"padding doubled", "whsec_" + k32 + "="},
		{"base64url alphabet", "whsec_" + urlOnly32},
		{"base64url, short", "whsec_" + urlOnly},
		{"leading space", " whsec_" + k32},
		{"trailing space", "whsec_" + k32 + " "},
		{"space after the prefix", "whsec_ " + k32},
		{"leading tab", "\twhsec_" + k32},
		{"trailing tab", "whsec_" + k32 + "\t"},
		{"space inside the key", "whsec_" + k32[:20] + " " + k32[20:]},
		{"NUL byte", "whsec_" + k32 + "\x00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := auditstream.ParseSecret(tt.secret)
			if err == nil {
				t.Fatalf("ParseSecret(%q) = %x, want an error", tt.secret, got)
			}
			if !errors.Is(err, auditstream.ErrSecret) {
				t.Fatalf("error = %v, want ErrSecret", err)
			}
			if got != nil {
				t.Fatalf("key = %x alongside the error, want nil", got)
			}
			if len(tt.secret) > 8 && strings.Contains(err.Error(), strings.TrimSpace(tt.secret)) {
				t.Fatalf("error %q repeats the secret", err)
			}
		})
	}
}

func TestAuditParseSecretBounds(t *testing.T) {
	// Every length from 0 to 80 bytes: accepted exactly from MinKeyBytes
	// to MaxKeyBytes.
	if auditstream.MinKeyBytes != 24 || auditstream.MaxKeyBytes != 64 {
		t.Fatalf("bounds = %d..%d, want Standard Webhooks' 24..64", auditstream.MinKeyBytes, auditstream.MaxKeyBytes)
	}
	for n := 0; n <= 80; n++ {
		_, err := auditstream.ParseSecret("whsec_" + std(n))
		if ok := n >= 24 && n <= 64; ok != (err == nil) {
			t.Errorf("%d bytes: err = %v, want accepted %v", n, err, ok)
		}
	}
}

func TestAuditRetryDelay(t *testing.T) {
	for _, tt := range []struct {
		attempts int
		want     time.Duration
	}{
		{math.MinInt, time.Second},
		{-1, time.Second},
		{0, time.Second},
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{4, 8 * time.Second},
		{5, 16 * time.Second},
		{6, 32 * time.Second},
		{7, 64 * time.Second},
		{8, 128 * time.Second},
		{9, 256 * time.Second},
		{10, 5 * time.Minute}, // 512 s, capped
		{11, 5 * time.Minute},
		{64, 5 * time.Minute}, // 2^63 s would overflow a Duration
		{65, 5 * time.Minute},
		{1000, 5 * time.Minute},
		{math.MaxInt32, 5 * time.Minute},
		{math.MaxInt, 5 * time.Minute},
	} {
		if got := delay(t, tt.attempts); got != tt.want {
			t.Errorf("RetryDelay(%d) = %v, want %v", tt.attempts, got, tt.want)
		}
	}
	if auditstream.RetryFirst != time.Second || auditstream.RetryMax != 5*time.Minute {
		t.Fatalf("RetryFirst, RetryMax = %v, %v; want 1s, 5m", auditstream.RetryFirst, auditstream.RetryMax)
	}
}

func TestAuditRetryDelayNeverShrinks(t *testing.T) {
	prev := time.Duration(0)
	for n := -3; n <= 200; n++ {
		d := delay(t, n)
		if d < prev || d < auditstream.RetryFirst || d > auditstream.RetryMax {
			t.Fatalf("RetryDelay(%d) = %v after %v: want non-decreasing within [1s, 5m]", n, d, prev)
		}
		prev = d
	}
}

// delay is RetryDelay(attempts), failing the test when it does not return
// within a second (a loop that runs attempts times would not, for
// MaxInt), instead of hanging the package until go test's timeout.
func delay(t *testing.T, attempts int) time.Duration {
	t.Helper()
	done := make(chan time.Duration, 1)
	go func() { done <- auditstream.RetryDelay(attempts) }()
	select {
	case d := <-done:
		return d
	case <-time.After(time.Second):
		t.Fatalf("RetryDelay(%d) did not return within a second", attempts)
		return 0
	}
}
