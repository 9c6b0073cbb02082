package main

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// aggregates maps each name a record of a domain aggregate could take
// outside the domain to the aggregate it would copy: "Repository" and
// "RepositoryRepository" are not needed, "Run" and "ReviewRun" both name
// review.Run. An aggregate is a type the domain loads from the database
// through an Unmarshal…FromDatabase constructor, which re-checks its
// invariants; a second record of it in ports or app would carry the same
// data past those checks (it is how Repository and ReviewRun were plain
// records in ports while Server was a domain type).
type aggregates map[string]string

// domainAggregates reads the domain's non-test files under root/domain.
func domainAggregates(root string) (aggregates, error) {
	out := aggregates{}
	dir := filepath.Join(root, "domain")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Unmarshal") || !strings.HasSuffix(fn.Name.Name, "FromDatabase") {
				continue
			}
			if fn.Type.Results == nil || len(fn.Type.Results.List) == 0 {
				continue
			}
			t := fn.Type.Results.List[0].Type
			if star, ok := t.(*ast.StarExpr); ok {
				t = star.X
			}
			id, ok := t.(*ast.Ident)
			if !ok || !id.IsExported() {
				continue
			}
			pkg := f.Name.Name
			full := pkg + "." + id.Name
			out[id.Name] = full
			if prefix := strings.ToUpper(pkg[:1]) + pkg[1:]; !strings.HasPrefix(id.Name, prefix) {
				out[prefix+id.Name] = full
			}
		}
		return nil
	})
	return out, err
}

// aggregateCopy reports a type declared in ports or app (fakes included)
// under the name of a domain aggregate: those layers use the domain's
// type; adapters keep their own unexported row types.
func (a aggregates) aggregateCopy(rel string, f *ast.File, add func(token.Pos, string, ...any)) {
	if !strings.HasPrefix(rel, "ports/") && !strings.HasPrefix(rel, "app/") {
		return
	}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, spec := range gen.Specs {
			ts := spec.(*ast.TypeSpec)
			if full, ok := a[ts.Name.Name]; ok {
				add(ts.Pos(), "declares %s, a record of the domain aggregate %s: ports and app use the domain type, built and loaded through its constructors", ts.Name.Name, full)
			}
		}
	}
}
