//go:build signedoff

package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codelotse/codelotse/internal/npmtest"
)

// The Node.js side of the interop matrix: the TypeScript SDKs pinned in
// testdata/interop/sdk1 and sdk2 (package.json and package-lock.json),
// installed with `npm ci` on first use, each run as one Node process that
// serves every endpoint of its SDK over HTTPS on 127.0.0.1 with the test
// PKI's leaf (testdata/interop/harness.mjs).

const (
	interopDir     = "testdata/interop"
	interopRepoDir = "cmd/codelotse/testdata/interop"
	// interopMinNode is the oldest Node.js major the pinned trees run on
	// (@modelcontextprotocol/server 2.x declares node >=20).
	interopMinNode = 20
)

// ensureInterop runs `npm ci` in dir unless node_modules already holds
// every dependency at its pin (package.json pins exact versions).
func ensureInterop(t *testing.T, dir, repoDir string) {
	t.Helper()
	pins := interopPins(t, dir, repoDir)
	npmtest.Install(t, dir, repoDir, func() string { return interopInstalled(dir, pins) })
}

// interopPins reads the dependencies of dir/package.json, each pinned to
// an exact version.
func interopPins(t *testing.T, dir, repoDir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("%s/package.json: %v", repoDir, err)
	}
	for name, v := range pkg.Dependencies {
		if v == "" || strings.ContainsAny(v, "^~<>=* |") {
			t.Fatalf("%s/package.json: %s %q is not an exact version", repoDir, name, v)
		}
	}
	return pkg.Dependencies
}

// interopInstalled says which pinned dependency node_modules lacks or
// holds at another version ("" when every one is there).
func interopInstalled(dir string, pins map[string]string) string {
	for name, want := range pins {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil {
			return name + " is not installed"
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &pkg) != nil || pkg.Version != want {
			return fmt.Sprintf("node_modules holds %s@%q, want %s", name, pkg.Version, want)
		}
	}
	return ""
}

// writeLeafPEM writes the test PKI's leaf certificate and key as PEM
// files for Node's https server.
func writeLeafPEM(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	leaf := e2ePKI().Leaf
	var certPEM bytes.Buffer
	for _, der := range leaf.Certificate {
		if err := pem.Encode(&certPEM, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
			t.Fatal(err)
		}
	}
	der, err := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "leaf.pem"), filepath.Join(dir, "leaf-key.pem")
	if err := os.WriteFile(certFile, certPEM.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// nodeInterop is one running Node process of the matrix.
type nodeInterop struct {
	sdk    string
	port   int
	bearer string
	client *http.Client
}

// startNodeInterop installs testdata/interop/<sdk> if needed and runs its
// server.mjs in a process group of its own with an environment of its
// own (the certificate, the key and the bearer token only); it returns
// once the process listens. At cleanup the group is killed and reaped.
func startNodeInterop(t *testing.T, node, sdk, certFile, keyFile, bearer string) *nodeInterop {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(interopDir, sdk))
	if err != nil {
		t.Fatal(err)
	}
	ensureInterop(t, dir, interopRepoDir+"/"+sdk)

	cmd := exec.Command(node, filepath.Join(dir, "server.mjs"))
	cmd.Dir = dir
	cmd.Env = []string{"INTEROP_CERT=" + certFile, "INTEROP_KEY=" + keyFile, "INTEROP_TOKEN=" + bearer}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	output := &syncBuffer{}
	cmd.Stderr = output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %s/server.mjs: %v", node, dir, err)
	}
	pgid := cmd.Process.Pid
	ports := make(chan int, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Bytes()
			output.Write(append(append([]byte(nil), line...), '\n'))
			var m struct {
				Listening int `json:"listening"`
			}
			if json.Unmarshal(line, &m) == nil && m.Listening > 0 {
				select {
				case ports <- m.Listening:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		<-read
		waitErr = cmd.Wait()
		close(exited)
	}()
	p := &nodeInterop{sdk: sdk, bearer: bearer, client: &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e2ePKI().Pool}},
		Timeout:   10 * time.Second,
	}}
	t.Cleanup(func() {
		p.client.CloseIdleConnections()
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			t.Errorf("interop %s (pid %d) not reaped 15 s after SIGKILL", sdk, pgid)
		}
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group %d still exists after cleanup (kill 0: %v)", pgid, err)
		}
		if t.Failed() {
			t.Logf("interop %s output:\n%s", sdk, output.String())
		}
	})
	select {
	case p.port = <-ports:
	case <-exited:
		t.Fatalf("interop %s exited before listening: %v\n%s", sdk, waitErr, output.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("interop %s did not listen within 30 s:\n%s", sdk, output.String())
	}
	return p
}

// url is https://localhost:<port><path>.
func (p *nodeInterop) url(path string) string {
	return fmt.Sprintf("https://localhost:%d%s", p.port, path)
}

// requests is the process's record of the requests on path.
func (p *nodeInterop) requests(t *testing.T, path string) []serverRequest {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.url("/__requests"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.bearer)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatalf("GET the record of interop %s: %v", p.sdk, err)
	}
	defer resp.Body.Close()
	var all []struct {
		Path string `json:"path"`
		serverRequest
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the record of interop %s: %s", p.sdk, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatalf("the record of interop %s: %v", p.sdk, err)
	}
	var out []serverRequest
	for _, r := range all {
		if r.Path == path {
			out = append(out, r.serverRequest)
		}
	}
	return out
}
