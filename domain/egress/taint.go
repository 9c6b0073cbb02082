package egress

import (
	"math/bits"
	"strings"
	"sync"
)

// The lengths the check works with, in folded characters (see Fold).
const (
	// Piece is the shortest run of a value's characters that counts as
	// sent: 7 folded characters are 36 bits; an ordinary term shares
	// one with a random value by chance about once in 10^10 position
	// pairs, so a block needs the attacker, not bad luck. Shorter pieces,
	// reordered, are the channel that is left (docs/threat-model.md, MC5).
	Piece = 7
	// Fragment is how many characters of one value the run's arguments
	// may hold, in counted pieces, before a call is blocked: 10 folded
	// characters are 51 bits, beyond what an ordinary term of the diff
	// shares with a secret, and under half the random part of every
	// planted vendor shape (AWS 16, GitHub 36, Stripe 24, Slack and
	// GitLab 20 and more). A value shorter than that must be sent whole.
	Fragment = 10
	// MinValue is the shortest value kept: shorter ones cannot be told
	// from the words of ordinary terms.
	MinValue = 8
	// MaxValueLen caps the folded length of one kept value (a private
	// key's body is about 1,600).
	MaxValueLen = 4096
	// MaxValues caps the values one run keeps. A run that sees more
	// blocks every call (fail closed).
	MaxValues = 2048
	// historyBytes is how much of the run's sent arguments is read again
	// before each call's, so an encoding split over calls is decoded
	// whole: base64 of a 40-character key is 56 characters. Plain pieces
	// need no history: the pieces sent are counted per value.
	historyBytes = 256
	// filterLog is the log2 of the prefilter's bits over the pieces' keys.
	filterLog = 20
)

// Taint is what a review run has seen that must not leave it: the
// secret-like values of its context and of the tool results it received,
// and how much of each the run's sent arguments already hold. Safe for
// concurrent use.
type Taint struct {
	mu      sync.Mutex
	kept    map[string]bool
	values  []value
	index   map[uint64][]posting
	filter  []uint64
	history string
	full    bool
}

// value is one kept value: its folded form, the positions that sent
// arguments already hold, and how many may be held.
type value struct {
	folded []byte
	sent   []uint64
	limit  int
}

// posting is where a piece's key occurs: in which value, at which
// position of its folded form, read forwards or backwards.
type posting struct {
	value    int32
	pos      int32
	reversed bool
}

// NewTaint returns an empty taint.
func NewTaint() *Taint {
	return &Taint{kept: map[string]bool{}, index: map[uint64][]posting{}, filter: make([]uint64, 1<<filterLog/64)}
}

// Add keeps values the run has seen (see Collect); values that fold to
// fewer than MinValue characters are ignored. It returns how many were
// new.
func (t *Taint) Add(values ...string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	added := 0
	for _, v := range values {
		f := Fold(v)
		if len(f) < MinValue {
			continue
		}
		if len(f) > MaxValueLen {
			f = f[:MaxValueLen]
		}
		if t.kept[string(f)] {
			continue
		}
		if len(t.values) == MaxValues {
			t.full = true
			return added
		}
		t.kept[string(f)] = true
		id := int32(len(t.values))
		t.values = append(t.values, value{folded: f, sent: make([]uint64, (len(f)+63)/64), limit: min(Fragment, len(f))})
		p := plain(v)
		if len(p) != len(f) {
			p = nil // a value with non-ASCII letters: its rotations are not read
		}
		t.addPieces(id, f, p, false)
		t.addPieces(id, reverseBytes(f), reverseBytes(p), true)
		added++
	}
	return added
}

// addPieces indexes the pieces of a value: of its folded form f, and of
// the deltas of its plain form p (so a rotation of the letters is found in
// one pass), tagged apart. Both forms have the value's positions.
func (t *Taint) addPieces(id int32, f, p []byte, reversed bool) {
	for _, form := range []struct {
		syms []byte
		tag  uint64
	}{{codes(f), 0}, {deltas(codes(p)), deltaTag}} {
		var k uint64
		for i, sym := range form.syms {
			k = (k<<6 | uint64(sym)) & keyMask
			if i+1 >= Piece {
				key := k | form.tag
				t.index[key] = append(t.index[key], posting{value: id, pos: int32(i + 1 - Piece), reversed: reversed})
				h := filterHash(key)
				t.filter[h/64] |= 1 << (h % 64)
			}
		}
	}
}

func reverseBytes(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[len(b)-1-i] = c
	}
	return out
}

// codes are f's characters as codes (see code).
func codes(f []byte) []byte {
	out := make([]byte, len(f))
	for i, c := range f {
		out[i] = byte(code[c])
	}
	return out
}

// deltas is the rotation-free form of codes: a letter after a letter is
// its distance from that letter (1–26), a letter after anything else is
// 37, a digit stays itself. Every letter rotation of a text has the same
// deltas.
func deltas(c []byte) []byte {
	out := make([]byte, len(c))
	prev := byte(0)
	for i, x := range c {
		switch {
		case x > 26:
			out[i] = x
		case prev >= 1 && prev <= 26:
			out[i] = 1 + (x+26-prev)%26
		default:
			out[i] = 37
		}
		prev = x
	}
	return out
}

// deltaTag sets the keys of delta pieces apart from those of codes.
const deltaTag = 1 << 62

const keyMask = 1<<(6*Piece) - 1

func filterHash(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> (64 - filterLog) }

// Len is how many values the taint keeps.
func (t *Taint) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.values)
}

// Roots are the texts a call's views start from: each string argument,
// all of them joined (a value split over properties), and the run's sent
// arguments before them (a value split over calls).
func (t *Taint) Roots(args []string) []string {
	joined := strings.Join(args, "")
	roots := append([]string(nil), args...)
	if len(args) > 1 {
		roots = append(roots, joined)
	}
	t.mu.Lock()
	history := t.history
	t.mu.Unlock()
	if history != "" {
		roots = append(roots, history+joined)
	}
	return roots
}

// Admit decides whether a call whose arguments are args, read as views
// (Views of Roots(args)), may be sent. It may not when any view, folded,
// holds Fragment characters of a kept value (or the whole of a shorter
// one) in pieces of at least Piece characters, read forwards, backwards,
// in any of the 25 letter rotations or every second or third character,
// counting what the run's earlier admitted calls held. An admitted call's
// pieces count for the calls after it. A taint that overflowed
// (MaxValues) admits nothing.
func (t *Taint) Admit(args []string, views []string) bool {
	folded := make([][]byte, len(views))
	plains := make([][]byte, len(views))
	for i, v := range views {
		folded[i], plains[i] = Fold(v), plain(v)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.full {
		return false
	}
	held := map[int32][]uint64{}
	if len(t.values) > 0 {
		for i := range folded {
			t.scan(folded[i], plains[i], held)
		}
	}
	for id, h := range held {
		v := &t.values[id]
		n := 0
		for i := range h {
			n += bits.OnesCount64(h[i] | v.sent[i])
		}
		if n >= v.limit {
			return false
		}
	}
	for id, h := range held {
		for i := range h {
			t.values[id].sent[i] |= h[i]
		}
	}
	t.history += strings.Join(args, "")
	if len(t.history) > historyBytes {
		t.history = t.history[len(t.history)-historyBytes:]
	}
	return true
}

// scan marks in held the positions of kept values that a view's pieces
// hold: its folded form f as it is and every second and third character
// of it (a value interleaved with a filler), and every letter rotation of
// its plain form p (through the deltas). Reversal is in the index.
func (t *Taint) scan(f, p []byte, held map[int32][]uint64) {
	c := codes(f)
	t.scanStride(c, 0, 1, 0, held)
	t.scanStride(deltas(codes(p)), 0, 1, deltaTag, held)
	for step := 2; step <= 3; step++ {
		for off := 0; off < step; off++ {
			t.scanStride(c, off, step, 0, held)
		}
	}
}

func (t *Taint) scanStride(syms []byte, off, step int, tag uint64, held map[int32][]uint64) {
	var k uint64
	n := 0
	for i := off; i < len(syms); i += step {
		k = (k<<6 | uint64(syms[i])) & keyMask
		if n++; n < Piece {
			continue
		}
		key := k | tag
		if h := filterHash(key); t.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, p := range t.index[key] {
			v := t.values[p.value]
			start := int(p.pos)
			if p.reversed {
				start = len(v.folded) - int(p.pos) - Piece
			}
			h := held[p.value]
			if h == nil {
				h = make([]uint64, len(v.sent))
				held[p.value] = h
			}
			for j := start; j < start+Piece; j++ {
				h[j/64] |= 1 << (j % 64)
			}
		}
	}
}
