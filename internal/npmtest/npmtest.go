// Package npmtest finds Node.js and installs the npm packages a test pins,
// for the tests that run real peers and tools from the npm registry (the
// MCP reference server, the conformance suite, the SDK interop matrix,
// axe-core, the schema generators). It is for tests only: cmd/archlint
// lets only test files import it.
//
// A missing Node.js or npm, or a failed install, fails the test; it never
// skips, since these tests are part of make test.
package npmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequireNode returns the path of a node binary of major version minMajor
// or newer, or fails t; why says what needs it ("the MCP reference server
// …"), for the message.
func RequireNode(t testing.TB, minMajor int, why string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found on PATH (%v): %s needs Node.js >= %d and npm", err, why, minMajor)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", node, err)
	}
	v := strings.TrimSpace(string(out))
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	if err != nil || major < minMajor {
		t.Fatalf("node %s at %s: %s needs Node.js >= %d", v, node, why, minMajor)
	}
	return node
}

// installs serialises the installs of one directory within the test
// binary; a file lock in the directory serialises them across test
// processes (both builds of make test share the tree).
var installs sync.Map // absolute dir → *sync.Mutex

// Install runs `npm ci` in dir unless missing reports nothing (""), then
// checks missing again. repoDir names the directory in messages, as the
// repository knows it. Install scripts are not run; npm runs in a process
// group killed after five minutes.
func Install(t testing.TB, dir, repoDir string, missing func() string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	mu, _ := installs.LoadOrStore(abs, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	lock, err := os.OpenFile(filepath.Join(abs, ".npm-ci.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("lock %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing the file unlocks too

	if missing() == "" {
		return
	}
	start := time.Now()
	if err := npmCI(abs); err != nil {
		t.Fatalf("npm ci --prefix %s: %v", repoDir, err)
	}
	if m := missing(); m != "" {
		t.Fatalf("after npm ci in %s: %s", repoDir, m)
	}
	t.Logf("npm ci installed %s in %v", repoDir, time.Since(start).Round(time.Millisecond))
}

func npmCI(dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm not found on PATH (%w): the test installs its pinned packages with npm ci --no-audit --no-fund --ignore-scripts", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w (needs the npm registry)\n%s", err, out)
	}
	return nil
}
