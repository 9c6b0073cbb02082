package tool

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checkValue returns "" when node v is a valid value of r, else the
// reason; the reasons never hold the value.
func (p *parser) checkValue(r *rule, v int) string {
	nd := &p.nodes[v]
	if nd.kind == kindNull && r.nullOK {
		return ""
	}
	switch r.typ {
	case TypeString:
		if nd.kind != kindString {
			return "must be a string"
		}
		return r.checkString(p.str(v))
	case TypeNumber:
		if nd.kind != kindNumber {
			return "must be a number"
		}
		return r.checkNumber(nd.num, p.src[nd.lo:nd.hi])
	case TypeInteger:
		if nd.kind != kindNumber || nd.num != math.Trunc(nd.num) {
			return "must be an integer"
		}
		return r.checkNumber(nd.num, p.src[nd.lo:nd.hi])
	case TypeBoolean:
		if nd.kind != kindBool {
			return "must be a boolean"
		}
		return r.checkChoice(scalar{k: kindBool, b: nd.b})
	}
	return "has no type"
}

func (r *rule) checkString(s []byte) string {
	n := utf8.RuneCount(s)
	if n > r.maxLength {
		return "longer than " + strconv.Itoa(r.maxLength) + " characters"
	}
	if reason := r.checkChoice(scalar{k: kindString, s: string(s)}); reason != "" {
		return reason
	}
	if n < r.minLength {
		return "shorter than " + strconv.Itoa(r.minLength) + " characters"
	}
	if r.pattern != nil && !r.pattern.MatchString(string(s)) {
		return "does not match the pattern"
	}
	if r.format != "" && !knownFormats[r.format](string(s)) {
		return "is not a valid " + r.format
	}
	return ""
}

func (r *rule) checkNumber(v float64, lit []byte) string {
	if reason := r.checkChoice(scalar{k: kindNumber, num: v}); reason != "" {
		return reason
	}
	switch {
	case r.minimum != nil && v < *r.minimum:
		return "below the minimum"
	case r.exclMinimum != nil && v <= *r.exclMinimum:
		return "not above the exclusive minimum"
	case r.maximum != nil && v > *r.maximum:
		return "above the maximum"
	case r.exclMaximum != nil && v >= *r.exclMaximum:
		return "not below the exclusive maximum"
	case r.multipleOf != "" && !multipleOf(v, string(lit), r.multipleOfNum, r.multipleOf):
		return "not a multiple of " + r.multipleOf
	}
	return ""
}

func (r *rule) checkChoice(v scalar) string {
	if r.choices == nil || slices.ContainsFunc(r.choices, v.equal) {
		return ""
	}
	if r.isConst {
		return "not the allowed value"
	}
	return "not one of the allowed values"
}

// maxExactLiteral bounds the number literals divided exactly: a longer
// literal, or one with an exponent of four digits or more, is divided in
// floating point, so a hostile "1e-99999999" cannot make a huge rational.
const maxExactLiteral = 40

// multipleOf reports whether v (written lit) is an integer multiple of m
// (written mlit). Short decimal literals are divided exactly, as decimal
// numbers (0.3 is a multiple of 0.1); others in floating point.
func multipleOf(v float64, lit string, m float64, mlit string) bool {
	if exactLiteral(lit) && exactLiteral(mlit) {
		a, okA := new(big.Rat).SetString(lit)
		b, okB := new(big.Rat).SetString(mlit)
		if okA && okB && b.Sign() > 0 {
			return new(big.Rat).Quo(a, b).IsInt()
		}
	}
	q := v / m
	return !math.IsInf(q, 0) && !math.IsNaN(q) && q == math.Trunc(q)
}

func exactLiteral(lit string) bool {
	if len(lit) > maxExactLiteral {
		return false
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		exp := strings.TrimLeft(lit[i+1:], "+-")
		return len(strings.TrimLeft(exp, "0")) <= 3
	}
	return true
}

// admitsNoValue reports a rule that no non-null value can pass: a length
// range or numeric range that is empty, or choices that all fail the
// other constraints.
func (r *rule) admitsNoValue() bool {
	if r.typ == TypeString && r.minLength > r.maxLength {
		return true
	}
	lo, loIncl := math.Inf(-1), true
	hi, hiIncl := math.Inf(1), true
	if r.minimum != nil {
		lo = *r.minimum
	}
	if r.exclMinimum != nil && *r.exclMinimum >= lo {
		lo, loIncl = *r.exclMinimum, false
	}
	if r.maximum != nil {
		hi = *r.maximum
	}
	if r.exclMaximum != nil && *r.exclMaximum <= hi {
		hi, hiIncl = *r.exclMaximum, false
	}
	if lo > hi || lo == hi && !(loIncl && hiIncl) {
		return true
	}
	if r.choices == nil {
		return false
	}
	for _, c := range r.choices {
		if c.k == kindString && r.checkString([]byte(c.s)) == "" ||
			c.k == kindNumber && r.checkNumber(c.num, []byte(strconv.FormatFloat(c.num, 'g', -1, 64))) == "" ||
			c.k == kindBool {
			return false
		}
	}
	return true
}
