package egress

import (
	"math/bits"
	"strings"
	"sync"
)

// The lengths the check works with, in folded characters (see Fold: an
// alphabet of 33 letters and digits, about 5 bits a character).
const (
	// Piece is the shortest run of a value's characters that counts as
	// sent: 7 folded characters are about 35 bits; an ordinary term
	// shares one with a random value by chance about once in 10^10
	// position pairs, so a block needs the attacker, not bad luck.
	Piece = 7
	// Fragment is how many characters of one value the run's arguments
	// may hold, in counted pieces, before a call is blocked: 10 folded
	// characters are about 50 bits, beyond what an ordinary term of the
	// diff shares with a secret by chance, and short of the random part
	// of every planted vendor shape (AWS 16, Slack and GitLab 20 and more,
	// Stripe 24, GitHub 36). A value shorter than that must be sent whole.
	Fragment = 10
	// Link is the shortest run a chain starts with: a run of at least
	// Link characters of a value, then runs of its next characters (of
	// at least minFollow, chain.go) with one to MaxFiller other
	// characters between them in the view (a filler every few
	// characters), count as one piece once they cover Piece characters.
	Link = 4
	// MaxFiller is the widest gap between the runs of a chain.
	MaxFiller = 3
	// MinValue is the shortest value kept: shorter ones cannot be told
	// from the words of ordinary terms. A value must also hold at least
	// minDistinct different characters ("aaaaaaaaaa" is no secret).
	MinValue    = 8
	minDistinct = 5
	// MaxValueLen caps the folded length of one kept value (a private
	// key's body is about 1,600).
	MaxValueLen = 4096
	// MaxValues and MaxTaintBytes cap what one run keeps: the number of
	// values and their folded characters together. A run that sees more
	// blocks every call (fail closed).
	MaxValues     = 2048
	MaxTaintBytes = 256 << 10
	// maxPostings caps the places one key is indexed at: a key that many
	// values share tells nothing apart, and walking it must stay cheap.
	maxPostings = 64
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
// concurrent use: Check holds the taint while it decides, so concurrent
// calls of a run are judged one after the other.
type Taint struct {
	mu      sync.Mutex
	kept    map[string]bool
	values  []value
	bytes   int
	index   map[uint64][]posting // Piece-character keys of codes and of deltas
	links   map[uint32][]posting // Link-character keys of codes
	filter  []uint64             // a bit for each key of both, hashed
	history string
	full    bool
}

// value is one kept value: its folded form, the positions that sent
// arguments already hold, and how many may be held.
type value struct {
	folded []byte
	codes  []byte // codes(folded)
	sent   []uint64
	limit  int
}

// posting is where a key occurs: in which value, at which position of its
// folded form, read forwards or backwards.
type posting struct {
	value    int32
	pos      int32
	reversed bool
}

// NewTaint returns an empty taint.
func NewTaint() *Taint {
	return &Taint{kept: map[string]bool{}, index: map[uint64][]posting{}, links: map[uint32][]posting{},
		filter: make([]uint64, 1<<filterLog/64)}
}

// Add keeps values the run has seen (see Collect); a value that folds to
// fewer than MinValue characters or minDistinct different ones is
// ignored. It returns how many were new.
func (t *Taint) Add(values ...string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	added := 0
	for _, v := range values {
		f := Fold(v)
		if len(f) > MaxValueLen {
			f = f[:MaxValueLen]
		}
		if len(f) < MinValue || distinct(f) < minDistinct || t.kept[string(f)] {
			continue
		}
		if len(t.values) == MaxValues || t.bytes+len(f) > MaxTaintBytes {
			t.full = true
			return added
		}
		t.kept[string(f)] = true
		t.bytes += len(f)
		id := int32(len(t.values))
		t.values = append(t.values, value{folded: f, codes: codes(f), sent: make([]uint64, (len(f)+63)/64), limit: min(Fragment, len(f))})
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

func distinct(f []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range f {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}

// addPieces indexes the keys of a value: the Piece-character keys of its
// folded form f and of the deltas of its plain form p (so a rotation of
// the letters is found in one pass), tagged apart, and, forwards only,
// the Link-character keys of f. Both forms have the value's positions.
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
				if len(t.index[key]) < maxPostings {
					t.index[key] = append(t.index[key], posting{value: id, pos: int32(i + 1 - Piece), reversed: reversed})
				}
				h := filterHash(key)
				t.filter[h/64] |= 1 << (h % 64)
			}
		}
	}
	if reversed {
		return
	}
	var k uint32
	for i, c := range codes(f) {
		k = (k<<6 | uint32(c)) & linkMask
		if i+1 >= Link && len(t.links[k]) < maxPostings {
			t.links[k] = append(t.links[k], posting{value: id, pos: int32(i + 1 - Link)})
			h := filterHash(uint64(k) | linkTag)
			t.filter[h/64] |= 1 << (h % 64)
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

// deltaTag and linkTag set the keys of delta pieces and of links apart
// from those of codes in the filter.
const (
	deltaTag = 1 << 62
	linkTag  = 1 << 61
)

const (
	keyMask  = 1<<(6*Piece) - 1
	linkMask = 1<<(6*Link) - 1
)

func filterHash(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> (64 - filterLog) }

// Len is how many values the taint keeps.
func (t *Taint) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.values)
}

// Check decides whether a call whose string arguments are args may be
// sent, and when it may, counts what it holds for the calls after it. It
// reads the call as its views (Views of: each argument, all of them
// joined, and the run's last sent arguments before them); clean says
// whether a view holds nothing the scanner finds. The call may not be
// sent when the views are too many, a view is not clean, or the views,
// folded, hold Fragment characters of a kept value (or the whole of a
// shorter one) in pieces of at least Piece characters (or chains of
// runs, see Link), read forwards, backwards, in any letter rotation or
// every second or third character, counting what the run's earlier calls
// held. A taint that overflowed admits nothing.
func (t *Taint) Check(args []string, clean func(view string) bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	views, err := Views(t.roots(args))
	if err != nil {
		return false
	}
	for _, v := range views {
		if !clean(v) {
			return false
		}
	}
	return t.admit(args, views)
}

// roots are the texts a call's views start from: each string argument,
// all of them joined (a value split over properties), and the run's last
// sent arguments before the start of this call's (an encoding split over
// calls: the junction, historyBytes each side). t.mu is held.
func (t *Taint) roots(args []string) []string {
	joined := strings.Join(args, "")
	roots := append([]string(nil), args...)
	if len(args) > 1 {
		roots = append(roots, joined)
	}
	if t.history != "" {
		roots = append(roots, t.history+joined[:min(len(joined), historyBytes)])
	}
	return roots
}

// admit is Check's decision on the views; t.mu is held.
func (t *Taint) admit(args []string, views []string) bool {
	if t.full {
		return false
	}
	held := map[int32][]uint64{}
	if len(t.values) > 0 {
		s := scanner{t: t, held: held, seen: map[uint64]bool{}}
		folded := map[string]bool{}
		for _, v := range views {
			// views that fold alike (a decoding that changed only
			// separators) are read once
			if f, p := Fold(v), plain(v); !folded[string(f)+"\x00"+string(p)] {
				folded[string(f)+"\x00"+string(p)] = true
				s.scan(f, p)
			}
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

// scanner marks, for one call, the positions of kept values its views
// hold (held); seen are the keys already marked, since a key marks the
// same positions wherever it stands.
type scanner struct {
	t    *Taint
	held map[int32][]uint64
	seen map[uint64]bool
}

// scan marks what a view holds: its folded form f as it is, every second
// and third character of it (a value interleaved with a filler) and its
// chains of runs (chain.go), forwards and backwards; every letter
// rotation of its plain form p (through the deltas). Reversal of pieces
// is in the index.
func (s *scanner) scan(f, p []byte) {
	c := codes(f)
	s.stride(c, 0, 1, 0)
	s.stride(deltas(codes(p)), 0, 1, deltaTag)
	for step := 2; step <= 3; step++ {
		for off := 0; off < step; off++ {
			s.stride(c, off, step, 0)
		}
	}
	s.chains(c)
	s.chains(reverseBytes(c))
}

func (s *scanner) stride(syms []byte, off, step int, tag uint64) {
	var k uint64
	n := 0
	for i := off; i < len(syms); i += step {
		k = (k<<6 | uint64(syms[i])) & keyMask
		if n++; n < Piece {
			continue
		}
		key := k | tag
		if h := filterHash(key); s.t.filter[h/64]&(1<<(h%64)) == 0 || s.seen[key] {
			continue
		}
		s.seen[key] = true
		for _, p := range s.t.index[key] {
			start := int(p.pos)
			if p.reversed {
				start = len(s.t.values[p.value].folded) - int(p.pos) - Piece
			}
			s.mark(p.value, start, start+Piece)
		}
	}
}

// mark notes that value id's positions from start to end are held.
func (s *scanner) mark(id int32, start, end int) {
	h := s.held[id]
	if h == nil {
		h = make([]uint64, len(s.t.values[id].sent))
		s.held[id] = h
	}
	for j := start; j < end; j++ {
		h[j/64] |= 1 << (j % 64)
	}
}
