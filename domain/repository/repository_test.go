package repository_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
)

const goodID = "0c7dd81c-8256-48c9-9331-20b2815a8dbd"

// fields returns the sorted fields of the *field.Error values joined in
// err, and fails when err holds anything else.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var out []string
	for _, e := range errs {
		var fe *field.Error
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *field.Error", e)
		}
		out = append(out, fe.Field)
	}
	slices.Sort(out)
	return out
}

func TestNew(t *testing.T) {
	private := policy.VisibilityPrivate
	tests := []struct {
		name     string
		id       string
		repo     string
		v        policy.Visibility
		wantName string   // the stored name when accepted
		refused  []string // the fields refused, sorted; nil when accepted
	}{
		{name: "plain private", id: goodID, repo: "acme/api", v: private, wantName: "acme/api"},
		{name: "internal", id: goodID, repo: "acme/api", v: policy.VisibilityInternal, wantName: "acme/api"},
		{name: "public", id: goodID, repo: "acme/api", v: policy.VisibilityPublic, wantName: "acme/api"},
		{name: "stored composed (NFC)", id: goodID, repo: "acme/cafe\u0301", v: private, wantName: "acme/caf\u00e9"},
		{name: "at the length limit", id: goodID, repo: strings.Repeat("a", repository.MaxNameLen), v: private, wantName: strings.Repeat("a", repository.MaxNameLen)},
		// A name is a label, never a path: nothing joins it into a file
		// or URL path (the pages link by id), so slashes and dots are
		// kept as given, not cleaned into another name.
		{name: "path: parent segments kept verbatim", id: goodID, repo: "../../etc/passwd", v: private, wantName: "../../etc/passwd"},
		{name: "path: inner parent segment kept verbatim", id: goodID, repo: "acme/../api", v: private, wantName: "acme/../api"},
		{name: "path: leading slash kept verbatim", id: goodID, repo: "/acme/api", v: private, wantName: "/acme/api"},

		{name: "empty name", id: goodID, repo: "", v: private, refused: []string{"name"}},
		{name: "spaces only", id: goodID, repo: "  \t ", v: private, refused: []string{"name"}},
		{name: "too long", id: goodID, repo: strings.Repeat("a", repository.MaxNameLen+1), v: private, refused: []string{"name"}},
		{name: "too long in runes", id: goodID, repo: strings.Repeat("\u00e9", repository.MaxNameLen+1), v: private, refused: []string{"name"}},
		{name: "NUL inside", id: goodID, repo: "acme/\x00api", v: private, refused: []string{"name"}},
		{name: "NUL at the end", id: goodID, repo: "acme/api\x00", v: private, refused: []string{"name"}},
		{name: "control character", id: goodID, repo: "acme/\x01api", v: private, refused: []string{"name"}},
		{name: "terminal escape", id: goodID, repo: "acme/\x1b[31mapi", v: private, refused: []string{"name"}},
		{name: "inner newline", id: goodID, repo: "acme/a\npi", v: private, refused: []string{"name"}},
		{name: "carriage return", id: goodID, repo: "acme/a\rpi", v: private, refused: []string{"name"}},
		{name: "DEL", id: goodID, repo: "acme/a\x7fpi", v: private, refused: []string{"name"}},
		{name: "C1 control", id: goodID, repo: "acme/a\u0085pi", v: private, refused: []string{"name"}},
		{name: "invalid UTF-8", id: goodID, repo: "acme/\xff", v: private, refused: []string{"name"}},
		{name: "overlong UTF-8 solidus", id: goodID, repo: "acme\xc0\xafapi", v: private, refused: []string{"name"}},
		{name: "UTF-8 surrogate half", id: goodID, repo: "acme/\xed\xa0\x80", v: private, refused: []string{"name"}},
		{name: "truncated UTF-8", id: goodID, repo: "acme/caf\xc3", v: private, refused: []string{"name"}},
		{name: "bidi override", id: goodID, repo: "acme/\u202eipa", v: private, refused: []string{"name"}},
		{name: "zero-width space", id: goodID, repo: "acme/a\u200bpi", v: private, refused: []string{"name"}},
		{name: "leading space", id: goodID, repo: " acme/api", v: private, refused: []string{"name"}},
		{name: "path: full-width solidus look-alike", id: goodID, repo: "acme\uff0fapi", v: private, refused: []string{"name"}},
		{name: "path: full-width dots", id: goodID, repo: "acme/\uff0e\uff0e/api", v: private, refused: []string{"name"}},
		{name: "mixed Latin and Cyrillic", id: goodID, repo: "acme/\u0430pi", v: private, refused: []string{"name"}},

		{name: "zero visibility", id: goodID, repo: "acme/api", v: policy.Visibility{}, refused: []string{"visibility"}},

		{name: "empty id", id: "", repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id not a UUID", id: "not-a-uuid", repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id in upper case", id: strings.ToUpper(goodID), repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id without dashes", id: strings.ReplaceAll(goodID, "-", ""), repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id in braces", id: "{" + goodID + "}", repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id with a NUL", id: goodID[:35] + "\x00", repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id with trailing text", id: goodID + "x", repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id as SQL", id: "'; DROP TABLE x; --------------------", repo: "acme/api", v: private, refused: []string{"id"}},
		{name: "id path traversal", id: "../../../../../../../../../../../etc", repo: "acme/api", v: private, refused: []string{"id"}},

		{name: "every field at once", id: "x", repo: "", v: policy.Visibility{}, refused: []string{"id", "name", "visibility"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := repository.New(tt.id, tt.repo, tt.v)
			if tt.refused != nil {
				if r != nil || err == nil {
					t.Fatalf("New(%q, %q, %v) = %v, %v; want a refusal", tt.id, tt.repo, tt.v, r, err)
				}
				if got := fields(t, err); !slices.Equal(got, tt.refused) {
					t.Fatalf("New(%q, %q, %v) refused %q, want %q (%v)", tt.id, tt.repo, tt.v, got, tt.refused, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q, %q, %v) = %v", tt.id, tt.repo, tt.v, err)
			}
			if r.ID() != tt.id || r.Name() != tt.wantName || r.Visibility() != tt.v {
				t.Fatalf("New = {%q %q %v}, want {%q %q %v}", r.ID(), r.Name(), r.Visibility(), tt.id, tt.wantName, tt.v)
			}
		})
	}
}

func TestUnmarshalRepositoryFromDatabase(t *testing.T) {
	t.Run("a well-formed row loads", func(t *testing.T) {
		for _, v := range []policy.Visibility{policy.VisibilityPrivate, policy.VisibilityInternal, policy.VisibilityPublic} {
			r, err := repository.UnmarshalRepositoryFromDatabase(goodID, "acme/caf\u00e9", v.String())
			if err != nil || r.ID() != goodID || r.Name() != "acme/caf\u00e9" || r.Visibility() != v {
				t.Fatalf("load %s = %+v, %v", v, r, err)
			}
		}
	})
	// Names stored before the name rule, which New refuses today (its
	// look-alike parts): they load as stored, unnormalised, so one such
	// row never fails the repository list.
	t.Run("an older name loads as stored", func(t *testing.T) {
		for _, name := range []string{
			" acme/api",       // white space at the ends
			"acme/api ",       // a trailing space
			"   ",             // only spaces: not empty
			"acme/cafe\u0301", // not NFC
			"acme\uff0fapi",   // full-width solidus
			"acme/\ufb01le",   // a ligature
			"acme/\u0430pi",   // Latin and Cyrillic
			"acme/a\u200bpi",  // a zero-width space (a format character)
			"acme/a\u00adpi",  // a soft hyphen
			"acme/\u00a0api",  // a no-break space
			"acme/\u2028api",  // a line separator (white space, not a control)
		} {
			if r, err := repository.New(goodID, name, policy.VisibilityPrivate); err == nil && r.Name() == name {
				t.Errorf("New stores %q as is: not an older name", name)
			}
			r, err := repository.UnmarshalRepositoryFromDatabase(goodID, name, "internal")
			if err != nil || r.Name() != name || r.ID() != goodID || r.Visibility() != policy.VisibilityInternal {
				t.Errorf("load %q = %+v, %v; want it as stored", name, r, err)
			}
		}
		long := strings.Repeat("\u00e9", repository.MaxNameLen) // 200 characters, 400 bytes
		if r, err := repository.UnmarshalRepositoryFromDatabase(goodID, long, "private"); err != nil || r.Name() != long {
			t.Errorf("load %d characters = %+v, %v", repository.MaxNameLen, r, err)
		}
	})
	corrupt := []struct {
		name, id, repo, visibility string
		refused                    []string
	}{
		{"empty visibility", goodID, "acme/api", "", []string{"visibility"}},
		{"unknown visibility", goodID, "acme/api", "secret", []string{"visibility"}},
		{"visibility in upper case", goodID, "acme/api", "PUBLIC", []string{"visibility"}},
		{"visibility with a space", goodID, "acme/api", "private ", []string{"visibility"}},
		{"visibility with a NUL", goodID, "acme/api", "private\x00", []string{"visibility"}},
		// What it takes to show a name safely, whenever it was stored.
		{"empty name", goodID, "", "private", []string{"name"}},
		{"name with a NUL", goodID, "acme/\x00api", "private", []string{"name"}},
		{"name that is a NUL", goodID, "\x00", "private", []string{"name"}},
		{"name ending in a NUL", goodID, "acme/api\x00", "private", []string{"name"}},
		{"name with a control character", goodID, "acme/\x1bapi", "private", []string{"name"}},
		{"name with a terminal escape", goodID, "acme/\x1b[31mapi", "private", []string{"name"}},
		{"name with a line break", goodID, "acme/a\npi", "private", []string{"name"}},
		{"name with a carriage return", goodID, "acme/a\rpi", "private", []string{"name"}},
		{"name with a tab", goodID, "acme/\tapi", "private", []string{"name"}},
		{"name with DEL", goodID, "acme/a\x7fpi", "private", []string{"name"}},
		{"name with a C1 control", goodID, "acme/a\u0085pi", "private", []string{"name"}},
		{"name with a bidi override", goodID, "acme/\u202eipa", "private", []string{"name"}},
		{"name with a bidi embedding", goodID, "acme/\u202bapi", "private", []string{"name"}},
		{"name with a bidi isolate", goodID, "acme/\u2067api\u2069", "private", []string{"name"}},
		{"name with a right-to-left mark", goodID, "acme/\u200fapi", "private", []string{"name"}},
		{"name with an Arabic letter mark", goodID, "acme/\u061capi", "private", []string{"name"}},
		{"name not UTF-8", goodID, "acme/\xff", "private", []string{"name"}},
		{"name with an overlong UTF-8 solidus", goodID, "acme\xc0\xafapi", "private", []string{"name"}},
		{"name with a UTF-8 surrogate half", goodID, "acme/\xed\xa0\x80", "private", []string{"name"}},
		{"name with truncated UTF-8", goodID, "acme/caf\xc3", "private", []string{"name"}},
		{"name too long", goodID, strings.Repeat("a", repository.MaxNameLen+1), "private", []string{"name"}},
		{"name too long in characters", goodID, strings.Repeat("\u00e9", repository.MaxNameLen+1), "private", []string{"name"}},
		{"empty id", "", "acme/api", "private", []string{"id"}},
		{"id not a UUID", "42", "acme/api", "private", []string{"id"}},
		{"id in upper case", strings.ToUpper(goodID), "acme/api", "private", []string{"id"}},
		{"all corrupt", "x", "\x00", "?", []string{"id", "name", "visibility"}},
	}
	for _, tt := range corrupt {
		t.Run("corrupt: "+tt.name, func(t *testing.T) {
			r, err := repository.UnmarshalRepositoryFromDatabase(tt.id, tt.repo, tt.visibility)
			if r != nil || err == nil {
				t.Fatalf("load(%q, %q, %q) = %+v, %v; want an error", tt.id, tt.repo, tt.visibility, r, err)
			}
			if got := fields(t, err); !slices.Equal(got, tt.refused) {
				t.Fatalf("load(%q, %q, %q) refused %q, want %q (%v)", tt.id, tt.repo, tt.visibility, got, tt.refused, err)
			}
		})
	}
}

func TestChangeVisibility(t *testing.T) {
	r, err := repository.New(goodID, "acme/api", policy.VisibilityPrivate)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []policy.Visibility{policy.VisibilityPublic, policy.VisibilityInternal, policy.VisibilityInternal, policy.VisibilityPrivate} {
		if err := r.ChangeVisibility(v); err != nil || r.Visibility() != v {
			t.Fatalf("ChangeVisibility(%v) = %v; visibility %v", v, err, r.Visibility())
		}
	}
	err = r.ChangeVisibility(policy.Visibility{})
	if got := fields(t, err); !slices.Equal(got, []string{"visibility"}) {
		t.Fatalf("ChangeVisibility(zero) = %v; want a visibility refusal", err)
	}
	if r.Visibility() != policy.VisibilityPrivate || r.ID() != goodID || r.Name() != "acme/api" {
		t.Fatalf("a refused change changed the repository: {%q %q %v}", r.ID(), r.Name(), r.Visibility())
	}
}

// FuzzNewLoadsBack: whatever New accepts, the database loader accepts as
// stored, with the same values, so no repository written through New is
// ever a corrupt row; whatever the loader accepts is safe to show (valid
// UTF-8, 1 to MaxNameLen characters, no control or bidirectional control
// character) and is loaded as stored.
func FuzzNewLoadsBack(f *testing.F) {
	for _, s := range []string{"acme/api", "acme/cafe\u0301", "acme/\u212aelvin", "", "\x00", "acme/\u0430pi", "\xff", "../x", " a"} {
		f.Add(s, "private")
	}
	for _, s := range []string{"acme/\u202eipa", "acme/\x1b[31m", "acme/a\u0085", "acme/\u200f", strings.Repeat("\u00e9", 201)} {
		f.Add(s, "private")
	}
	f.Add("acme/api", "PUBLIC")
	f.Fuzz(func(t *testing.T, name, visibility string) {
		v, _ := policy.ParseVisibility(visibility)
		r, err := repository.New(goodID, name, v)
		if err == nil {
			back, err := repository.UnmarshalRepositoryFromDatabase(r.ID(), r.Name(), r.Visibility().String())
			if err != nil || back.Name() != r.Name() || back.Visibility() != r.Visibility() {
				t.Fatalf("New(%q) stored %q, which loads as %+v, %v", name, r.Name(), back, err)
			}
		}
		if back, err := repository.UnmarshalRepositoryFromDatabase(goodID, name, visibility); err == nil {
			n := utf8.RuneCountInString(name)
			if back.Name() != name || !utf8.ValidString(name) || n == 0 || n > repository.MaxNameLen ||
				strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }) {
				t.Fatalf("the loader took %q as %q", name, back.Name())
			}
		}
	})
}
