package egress

// run is a stretch of a view that matches a kept value character for
// character.
type run struct {
	value   int32
	start   int // in the value
	end     int // in the value, exclusive
	viewEnd int // in the view, the last character
}

// chains marks what a view's chains hold: a run of at least Link
// characters of one value, then, after 1 to MaxFiller other characters
// (fillers), the value's next characters, at least minFollow of them (or
// the rest of the value), and so on (follow). A chain counts once it
// holds Piece characters of the value; a single run counts only as a
// piece (stride).
func (s *scanner) chains(c []byte) {
	var live, next []run
	var carried []bool
	var k uint32
	for i, x := range c {
		k = (k<<6 | uint32(x)) & linkMask
		next = next[:0]
		carried = append(carried[:0], make([]bool, len(live))...)
		if h := filterHash(uint64(k) | linkTag); i+1 >= Link && s.t.filter[h/64]&(1<<(h%64)) != 0 {
			for _, p := range s.t.links[k] {
				q := int(p.pos)
				if j := continued(live, p); j >= 0 {
					r := live[j]
					r.end, r.viewEnd = q+Link, i
					next, carried[j] = append(next, r), true
					continue
				}
				next = append(next, run{value: p.value, start: q, end: q + Link, viewEnd: i})
			}
		}
		for j, l := range live {
			if !carried[j] {
				s.follow(c, l)
			}
		}
		live, next = next, live
	}
	for _, l := range live {
		s.follow(c, l)
	}
}

// continued is the index of the live run that the match p goes on with
// (the Link characters of the view ending here are the value's from
// p.pos on), or -1.
func continued(live []run, p posting) int {
	for j, l := range live {
		if l.value == p.value && l.end == int(p.pos)+Link-1 {
			return j
		}
	}
	return -1
}

// minFollow is the shortest run a chain goes on with after a filler
// (shorter only where the value ends).
const minFollow = 2

// follow goes on from run r through fillers, both ways: after (and
// before) 1 to MaxFiller characters of the view, the value's next (and
// previous) characters, the longest such run, as long as one is found;
// it marks the chain when it holds Piece characters.
func (s *scanner) follow(c []byte, r run) {
	v := s.t.values[r.value].codes
	start, end, links := r.start, r.end, 1
	viewStart, viewEnd := r.viewEnd-(r.end-r.start)+1, r.viewEnd
	for end < len(v) {
		m, f := longest(c, viewEnd, v, end, 1)
		if m == 0 || m < minFollow && end+m < len(v) {
			break
		}
		end, viewEnd, links = end+m, viewEnd+f+m, links+1
	}
	for start > 0 {
		m, f := longest(c, viewStart, v, start-1, -1)
		if m == 0 || m < minFollow && start-m > 0 {
			break
		}
		start, viewStart, links = start-m, viewStart-f-m, links+1
	}
	if links > 1 && end-start >= Piece {
		s.mark(r.value, start, end)
	}
}

// longest finds, 1 to MaxFiller characters of the view c beyond position
// from (dir 1: after it, -1: before it), the longest run that matches the
// value v from position at on in the same direction: its length and the
// fillers skipped.
func longest(c []byte, from int, v []byte, at, dir int) (best, skip int) {
	for f := 1; f <= MaxFiller; f++ {
		m := 0
		for {
			ci, vi := from+dir*(1+f+m), at+dir*m
			if ci < 0 || ci >= len(c) || vi < 0 || vi >= len(v) || c[ci] != v[vi] {
				break
			}
			m++
		}
		if m > best {
			best, skip = m, f
		}
	}
	return best, skip
}
