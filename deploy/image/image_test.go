package image_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/codelotse/codelotse/deploy/image"
)

// staticBinary builds testdata/hello as `make image` builds the service:
// CGO_ENABLED=0 for linux.
func staticBinary(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "hello")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./testdata/hello")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func options(bin string) image.Options {
	return image.Options{Binary: bin, CACerts: "testdata/ca.pem", Arch: runtime.GOARCH, Version: "1.2.3",
		Revision: "abc123", Source: "https://github.com/codelotse/codelotse", Created: time.Unix(1700000000, 0)}
}

// TestArchive opens the archive as a consumer would (an OCI image layout
// inside a tar) and checks the image's config and its only layer.
func TestArchive(t *testing.T) {
	img, err := image.Build(options(staticBinary(t)))
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "codelotse.oci.tar")
	if err := image.WriteArchive(img, "codelotse:1.2.3", archive); err != nil {
		t.Fatal(err)
	}

	dir := untar(t, archive)
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("not an OCI image layout: %v", err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "codelotse:1.2.3" {
		t.Fatalf("index manifests = %+v, want one named codelotse:1.2.3", im.Manifests)
	}
	got, err := ii.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User == "" || strings.HasPrefix(c.User, "0") || strings.HasPrefix(c.User, "root") {
		t.Errorf("User = %q, want a non-root user", c.User)
	}
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532 (the chart's runAsUser)", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/codelotse"}) {
		t.Errorf("Entrypoint = %q, want the binary", c.Entrypoint)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": "1.2.3",
		"org.opencontainers.image.source": "https://github.com/codelotse/codelotse", "org.opencontainers.image.revision": "abc123"} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform = %s/%s", cf.OS, cf.Architecture)
	}

	files := layerFiles(t, got)
	bin, ok := files["codelotse"]
	if !ok || bin.Mode&0o111 == 0 || bin.Uid != 0 {
		t.Errorf("/codelotse = %+v, want an executable owned by root", bin)
	}
	for _, want := range []string{"etc/passwd", "etc/ssl/certs/ca-certificates.crt", "tmp/"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the layer lacks %s", want)
		}
	}
	for name, h := range files {
		base := path.Base(strings.TrimSuffix(name, "/"))
		if slices.Contains([]string{"sh", "bash", "ash", "dash", "busybox"}, base) || strings.HasPrefix(name, "bin/") || strings.HasPrefix(name, "usr/") {
			t.Errorf("the image has %s: no shell or tools belong in it", name)
		}
		if h.Typeflag == tar.TypeSymlink || h.Mode&0o6000 != 0 {
			t.Errorf("%s: symlink or setuid/setgid", name)
		}
	}

	// The entrypoint is the binary given: it runs.
	exe := filepath.Join(t.TempDir(), "codelotse")
	if err := os.WriteFile(exe, bin.body, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(exe).Output(); err != nil || string(out) != "hello\n" {
		t.Errorf("the image's binary printed %q, %v", out, err)
	}
}

func TestReproducible(t *testing.T) {
	bin := staticBinary(t)
	var archives [2][]byte
	for i := range archives {
		img, err := image.Build(options(bin))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "a.tar")
		if err := image.WriteArchive(img, "codelotse:1.2.3", p); err != nil {
			t.Fatal(err)
		}
		if archives[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("two builds of the same binary differ")
	}
}

func TestRefusesDynamicBinaries(t *testing.T) {
	// /bin/ls on Debian needs the dynamic loader and libc, which the image
	// does not have.
	_, err := image.Build(options("/bin/ls"))
	if !errors.Is(err, image.ErrNotStatic) {
		t.Errorf("Build(/bin/ls) = %v, want ErrNotStatic", err)
	}
	o := options(staticBinary(t))
	o.Source = ""
	if _, err := image.Build(o); err == nil {
		t.Error("Build without a source label succeeded")
	}
}

type entry struct {
	*tar.Header
	body []byte
}

func layerFiles(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(h.Name, "/")] = entry{h, body}
	}
}

func untar(t *testing.T, archive string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
