package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The guarded MCP transport (adapters/mcpclient) is a chain of layers
// with one job each, assembled in one place: the function chain in
// chain.go, from a []layer literal, outermost first. Its order is the
// security argument of the package's doc; archlint keeps it, so that a
// reorder fails here as well as in the package's own tests, and names the
// property it would lose.
const (
	chainPackage  = "adapters/mcpclient"
	chainFile     = chainPackage + "/chain.go"
	chainFunc     = "chain"
	chainType     = "layer"
	chainLink     = "link"
	chainAssemble = "assemble"
)

// chainOrder is the argued order, outermost first, and why each layer
// stands where it does.
var chainOrder = []struct{ name, why string }{
	{"origin", "outermost: nothing answers a request to another origin in the lock's stead, counts it or fetches a token for it, and the final answer's redirect is refused"},
	{"handshake", "after a failed handshake request nothing more is sent: before the credential, so no token is fetched"},
	{"resumption", "inside the origin lock (counts only the pinned origin's requests), before the credential (a resumption over the bound costs no token)"},
	{"status", "outside the credential layer: it judges the answer after the one retry"},
	{"credential", "inside the origin lock: a credential is attached only to requests to the pinned origin; outside the deadline: each attempt gets its own"},
	{"deadline", "outside the cap, so the cap judges each read first"},
	{"cap", "innermost: counts the bytes the server sent before anything reads them"},
}

// chainLayers checks a file of the transport's package: the layers are
// assembled only in chain.go's chain (a []layer literal, a call of
// assemble), links built only by assemble, and the chain's literal
// follows chainOrder. It reports whether the file holds the chain.
func chainLayers(rel string, f *ast.File, add func(token.Pos, string, ...any)) (found bool) {
	if filepath.ToSlash(filepath.Dir(rel)) != chainPackage {
		return false
	}
	for _, decl := range f.Decls {
		fn, _ := decl.(*ast.FuncDecl)
		inChain := rel == chainFile && fn != nil && fn.Recv == nil && fn.Name.Name == chainFunc
		inAssemble := fn != nil && fn.Recv == nil && fn.Name.Name == chainAssemble
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == chainAssemble && !inChain {
					add(n.Pos(), "calls %s outside %s's %s: the guarded transport is assembled in one place, in its argued order", chainAssemble, chainFile, chainFunc)
				}
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == chainLink && !inAssemble {
					add(n.Pos(), "builds a %s outside %s: a layer is linked into the chain only by %s", chainLink, chainAssemble, chainAssemble)
					return false
				}
				if !isLayerSlice(n.Type) {
					return true
				}
				if !inChain {
					add(n.Pos(), "assembles layers of the guarded transport outside %s's %s: the chain has one place, in its argued order", chainFile, chainFunc)
					return false
				}
				found = true
				checkChainOrder(n, add)
				return false
			}
			return true
		})
	}
	return found
}

func isLayerSlice(t ast.Expr) bool {
	arr, ok := t.(*ast.ArrayType)
	if !ok || arr.Len != nil {
		return false
	}
	id, ok := arr.Elt.(*ast.Ident)
	return ok && id.Name == chainType
}

// checkChainOrder compares the literal's layer names with chainOrder.
func checkChainOrder(lit *ast.CompositeLit, add func(token.Pos, string, ...any)) {
	var names []string
	for _, el := range lit.Elts {
		name := ""
		if cl, ok := el.(*ast.CompositeLit); ok && len(cl.Elts) > 0 {
			if bl, ok := cl.Elts[0].(*ast.BasicLit); ok && bl.Kind == token.STRING {
				name, _ = strconv.Unquote(bl.Value)
			}
		}
		if name == "" {
			add(el.Pos(), "a layer of the guarded transport without its name as a string literal: archlint cannot check the chain's order")
			return
		}
		names = append(names, name)
	}
	for i, want := range chainOrder {
		if i >= len(names) {
			add(lit.Pos(), "the guarded transport lacks its layer %q (%s); the argued order is %s", want.name, want.why, orderList())
			return
		}
		if names[i] != want.name {
			add(lit.Elts[i].Pos(), "layer %q stands where %q belongs (%s); the argued order is %s", names[i], want.name, want.why, orderList())
			return
		}
	}
	if len(names) > len(chainOrder) {
		add(lit.Elts[len(chainOrder)].Pos(), "layer %q is not in the argued order (%s): argue its place in the package doc and in cmd/archlint/chain.go", names[len(chainOrder)], orderList())
	}
}

func orderList() string {
	names := make([]string, len(chainOrder))
	for i, l := range chainOrder {
		names[i] = l.name
	}
	return strings.Join(names, " → ")
}

// hasGoFiles reports whether dir holds a Go file other than a test.
func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return true
		}
	}
	return false
}

// missingChain is the violation of a transport package without its chain.
func missingChain() Violation {
	return Violation{File: chainFile, Line: 1, Msg: fmt.Sprintf("no function %s assembles the guarded transport from a []%s literal", chainFunc, chainType)}
}
