package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Violation is one finding: a file, a line and what is wrong there.
type Violation struct {
	File string
	Line int
	Msg  string
}

func (v Violation) String() string { return fmt.Sprintf("%s:%d: %s", v.File, v.Line, v.Msg) }

const sdkModule = "github.com/modelcontextprotocol/go-sdk"

// bannedTransport matches the go-sdk's process transports by name: the
// stdio, command and io transports, and anything named after stdio.
var bannedTransport = regexp.MustCompile(`(?i)^(StdioTransport|CommandTransport|IOTransport|.*stdio.*)$`)

// domainBannedImports are the import paths (or prefixes, ending in "/") the
// domain may not use: it holds rules only, no I/O.
var domainBannedImports = []string{
	"database/sql",
	"net",
	"net/http",
	"os",
	"os/",
	"github.com/uptrace/bun",
	"github.com/uptrace/bun/",
	"github.com/rs/zerolog",
	"github.com/rs/zerolog/",
	"github.com/jackc/",
	"github.com/modelcontextprotocol/",
}

// domainBannedLocal are the project's own layers the domain may not import.
var domainBannedLocal = []string{"adapters", "app", "cmd", "ports"}

// clockFuncs are the functions of package time that read or wait on the clock.
var clockFuncs = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}

// Check walks root and returns every violation, sorted by file and line.
func Check(root string) ([]Violation, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	aggs, err := domainAggregates(root)
	if err != nil {
		return nil, err
	}
	var out []Violation
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		vs, err := checkFile(path, filepath.ToSlash(rel), module, aggs)
		out = append(out, vs...)
		return err
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, err
}

func checkFile(path, rel, module string, aggs aggregates) ([]Violation, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	c := &fileCheck{
		fset: fset, rel: rel, module: module,
		inDomain: rel == "domain" || strings.HasPrefix(rel, "domain/"),
		sdkNames: map[string]bool{},
	}
	c.imports(f)
	aggs.aggregateCopy(rel, f, c.add)
	ast.Inspect(f, func(n ast.Node) bool {
		c.transportRef(n)
		c.clockCall(n)
		return true
	})
	return c.out, nil
}

// fileCheck is one file under check: where it is, what it imports and
// the violations found so far.
type fileCheck struct {
	fset     *token.FileSet
	rel      string // the file's slash-separated path under the root
	module   string
	inDomain bool
	sdkNames map[string]bool // local names of go-sdk imports
	sdkDot   bool            // a go-sdk package imported with "."
	timeName string          // the local name of package time, "" if not imported
	out      []Violation
}

func (c *fileCheck) add(pos token.Pos, format string, args ...any) {
	c.out = append(c.out, Violation{File: c.rel, Line: c.fset.Position(pos).Line, Msg: fmt.Sprintf(format, args...)})
}

// imports notes the local names of the go-sdk and time imports and
// applies the import rules: the stdio ban, the layer and test-helper
// rules and the domain's bans.
func (c *fileCheck) imports(f *ast.File) {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if strings.HasPrefix(p, sdkModule) {
			c.sdkNames[local] = true
			c.sdkDot = c.sdkDot || local == "."
			if strings.Contains(strings.ToLower(p[len(sdkModule):]), "stdio") {
				c.add(imp.Pos(), "imports %s: stdio transports are banned (MC11)", p)
			}
		}
		if p == "time" {
			c.timeName = local
		}
		if msg := layerViolation(c.rel, p, c.module); msg != "" {
			c.add(imp.Pos(), "%s", msg)
		}
		if msg := testOnlyViolation(c.rel, p, c.module); msg != "" {
			c.add(imp.Pos(), "%s", msg)
		}
		if c.inDomain {
			c.domainImport(imp.Pos(), p)
		}
	}
}

// domainImport applies the domain's bans to one of its imports: no I/O
// package and none of the project's other layers.
func (c *fileCheck) domainImport(pos token.Pos, p string) {
	for _, b := range domainBannedImports {
		if p == b || (strings.HasSuffix(b, "/") && strings.HasPrefix(p, b)) {
			c.add(pos, "domain imports %s: the domain holds rules only, no I/O", p)
		}
	}
	for _, layer := range domainBannedLocal {
		if p == c.module+"/"+layer || strings.HasPrefix(p, c.module+"/"+layer+"/") {
			c.add(pos, "domain imports %s: the domain may not depend on %s/", p, layer)
		}
	}
}

// transportRef reports a reference to a go-sdk stdio or command
// transport, qualified or through a dot import.
func (c *fileCheck) transportRef(n ast.Node) {
	switch n := n.(type) {
	case *ast.Ident:
		if c.sdkDot && bannedTransport.MatchString(n.Name) {
			c.add(n.Pos(), "refers to %s of a dot-imported go-sdk package: stdio and command transports are banned (MC11)", n.Name)
		}
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok && c.sdkNames[x.Name] && bannedTransport.MatchString(n.Sel.Name) {
			c.add(n.Pos(), "refers to %s.%s: stdio and command transports are banned (MC11)", x.Name, n.Sel.Name)
		}
	}
}

// clockCall reports a domain file's reference to a clock function of
// package time.
func (c *fileCheck) clockCall(n ast.Node) {
	if !c.inDomain || c.timeName == "" {
		return
	}
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return
	}
	if x, ok := sel.X.(*ast.Ident); ok && x.Name == c.timeName && clockFuncs[sel.Sel.Name] {
		c.add(sel.Pos(), "domain calls time.%s: time comes in as a value", sel.Sel.Name)
	}
}

// layerViolation applies the import rule between the project's own
// layers outside the domain (whose bans are stricter and listed above):
// ports depend on the domain only; app never imports an adapter or cmd;
// an adapter never imports another adapter (its own sub-packages are
// part of it, e.g. adapters/postgres/pgtest); an application module
// (app/<module>) imports the shared root package app and its own
// sub-packages, never another module, and the root imports no module. A
// module that needs another's use case gets it through a port that
// cmd/codelotse binds. Test files are not checked, so a test may use
// another adapter's test helper.
func layerViolation(rel, imp, module string) string {
	target, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return ""
	}
	targetLayer, targetRest, _ := strings.Cut(target, "/")
	fromLayer, _, _ := strings.Cut(rel, "/")
	switch fromLayer {
	case "ports":
		return portsImport(imp, targetLayer)
	case "app":
		return appImport(rel, imp, targetLayer, targetRest)
	case "adapters":
		return adapterImport(rel, imp, targetLayer, targetRest)
	}
	return ""
}

// portsImport is the rule for ports: the domain only.
func portsImport(imp, targetLayer string) string {
	if targetLayer == "adapters" || targetLayer == "app" || targetLayer == "cmd" {
		return fmt.Sprintf("ports imports %s: ports depend on the domain only", imp)
	}
	return ""
}

// appImport is the rule for app: no adapter, no cmd, and no other
// application module.
func appImport(rel, imp, targetLayer, targetRest string) string {
	switch {
	case targetLayer == "adapters" || targetLayer == "cmd":
		return fmt.Sprintf("app imports %s: use cases reach the outside through ports only", imp)
	case targetLayer == "app" && targetRest != "":
		from, to := appModule(rel), strings.Split(targetRest, "/")[0]
		if from == "" {
			return fmt.Sprintf("the shared package app imports %s: the root is shared by every module and imports none", imp)
		}
		if from != to {
			return fmt.Sprintf("app module %s imports %s: modules import the shared package app and ports, never another module", from, imp)
		}
	}
	return ""
}

// adapterImport is the rule for an adapter: no other adapter, no cmd.
func adapterImport(rel, imp, targetLayer, targetRest string) string {
	switch targetLayer {
	case "adapters":
		from := strings.Split(rel, "/")[1]
		to, _, _ := strings.Cut(targetRest, "/")
		if from != to {
			return fmt.Sprintf("adapter %s imports %s: an adapter never imports another adapter", from, imp)
		}
	case "cmd":
		return fmt.Sprintf("imports %s: nothing imports cmd", imp)
	}
	return ""
}

// testOnlyPackages are packages that exist for tests (real peers shared
// by several packages' tests) and must never reach the binary: only test
// files, which Check does not read, may import them.
var testOnlyPackages = []string{"adapters/mcpclient/oauthpeer", "internal/npmtest"}

func testOnlyViolation(rel, imp, module string) string {
	target, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return ""
	}
	for _, p := range testOnlyPackages {
		if (target == p || strings.HasPrefix(target, p+"/")) && !strings.HasPrefix(rel, p+"/") {
			return fmt.Sprintf("imports %s: a test helper, only test files import it", imp)
		}
	}
	return ""
}

// appModule is the application module a file under app/ belongs to, ""
// for a file of the shared root package app.
func appModule(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[1]
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+(\S+)`)

func modulePath(root string) (string, error) {
	b, err := readFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	m := moduleLine.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("no module line in %s", filepath.Join(root, "go.mod"))
	}
	return string(m[1]), nil
}
