#!/bin/sh
# gen.sh extracts the true- and false-positive samples that gitleaks'
# rule generator (cmd/generate/config/rules/*.go) validates each rule
# against, and writes them to ../../testdata/gitleaks-samples.json.
#
# The samples are built in Go code (many are random secrets generated from
# the rule's own pattern), so they are captured by running that code: the
# rules package is copied into a scratch module whose utils.Validate
# records its arguments instead of checking them. Run once per rule-set
# update, from this directory; the output is committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../testdata/gitleaks-samples.json"
version=v8.30.1
cd "$here/.."
gl=$(go list -m -f '{{.Dir}}' github.com/zricethezav/gitleaks/v8)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/rules" "$tmp/utils"
cp "$gl"/cmd/generate/config/rules/*.go "$tmp/rules/"
rm -f "$tmp"/rules/*_test.go
cp "$gl/cmd/generate/config/utils/generate.go" "$gl/cmd/generate/config/utils/patterns.go" "$tmp/utils/"
sed -i 's#"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"#"gen/utils"#' "$tmp"/rules/*.go
cp "$here/record.go.txt" "$tmp/utils/record.go"

{
	echo 'package main'
	echo 'import ("encoding/json"; "os"; "gen/rules"; "gen/utils")'
	echo 'func main() {'
	grep -E '^[[:space:]]*rules\.[A-Za-z0-9_]+\(\),' "$gl/cmd/generate/config/main.go" | sed 's/,$//'
	echo '	enc := json.NewEncoder(os.Stdout); enc.SetIndent("", " "); enc.SetEscapeHTML(false)'
	echo '	if err := enc.Encode(utils.Recorded); err != nil { panic(err) }'
	echo '}'
} > "$tmp/main.go"

cp go.mod go.sum "$tmp/"
cd "$tmp"
sed -i -e 's#^module .*#module gen#' -e '/codelotse/d' go.mod
GOFLAGS=-mod=mod go run . > "$out"
echo "wrote $out ($(grep -c '"rule"' "$out") rules, gitleaks $version)"
