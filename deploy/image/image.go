// Package image builds the codelotse container image without a container
// engine: one layer with the static binary, a passwd entry for the
// non-root user, the CA bundle and an empty /tmp; no shell, no package
// manager, nothing else. The result is written as an OCI image archive (a
// tar of an OCI image layout), which skopeo, crane, podman and containerd
// load or push.
package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the image's user and group: not root, and the same ids the Helm
// chart's securityContext names.
const (
	User       = "65532:65532"
	uid        = 65532
	BinaryPath = "/codelotse"
	// Port is the port QUAVON_HTTP_ADDR listens on inside the image.
	Port = "8080"
)

// Options describe one image.
type Options struct {
	Binary   string    // a statically linked linux executable
	CACerts  string    // the CA bundle installed as /etc/ssl/certs/ca-certificates.crt
	Arch     string    // GOARCH of the binary
	Version  string    // org.opencontainers.image.version
	Revision string    // org.opencontainers.image.revision (a commit)
	Source   string    // org.opencontainers.image.source (the repository URL)
	Created  time.Time // fixed, for reproducible builds (the commit's time)
}

// ErrNotStatic refuses a binary that needs a dynamic loader or shared
// libraries: the image has none.
var ErrNotStatic = errors.New("image: the binary is not statically linked (build it with CGO_ENABLED=0)")

// Build assembles the image.
func Build(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	if err := checkStatic(bin, o.Arch); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("image: CA bundle: %w", err)
	}
	if o.Version == "" || o.Source == "" {
		return nil, errors.New("image: version and source are required")
	}
	layerTar, err := rootfs(bin, ca, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	labels := map[string]string{
		"org.opencontainers.image.title":    "codelotse",
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Revision,
		"org.opencontainers.image.source":   o.Source,
		"org.opencontainers.image.created":  o.Created.UTC().Format(time.RFC3339),
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: o.Created.UTC()}
	cf.Config = v1.Config{
		User:         User,
		Entrypoint:   []string{BinaryPath},
		Cmd:          []string{"serve"},
		WorkingDir:   "/",
		Env:          []string{"QUAVON_HTTP_ADDR=0.0.0.0:" + Port},
		ExposedPorts: map[string]struct{}{Port + "/tcp": {}},
		Labels:       labels,
	}
	cf.History = []v1.History{{Created: cf.Created, CreatedBy: "codelotse deploy/cmd/mkimage", Comment: "static binary, CA bundle, passwd"}}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

func checkStatic(bin []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("image: the binary is not an ELF executable: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return ErrNotStatic
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return ErrNotStatic
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if want == 0 || f.Machine != want {
		return fmt.Errorf("image: the binary is for %v, not %q", f.Machine, arch)
	}
	return nil
}

// rootfs is the image's only layer. Files belong to root and are not
// writable by the service's user; /tmp is the one writable directory (the
// chart mounts an emptyDir there under a read-only root filesystem).
func rootfs(bin, ca []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: owner, Gid: owner, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, uid)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	steps := []func() error{
		func() error { return file("codelotse", 0o755, bin) },
		func() error { return dir("etc/", 0o755, 0) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return dir("etc/ssl/", 0o755, 0) },
		func() error { return dir("etc/ssl/certs/", 0o755, 0) },
		func() error { return file("etc/ssl/certs/ca-certificates.crt", 0o644, ca) },
		func() error { return dir("home/", 0o755, 0) },
		func() error { return dir("home/nonroot/", 0o700, uid) },
		func() error { return dir("tmp/", 0o1777, 0) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteArchive writes img as an OCI image archive at path, tagged with
// ref (the index's org.opencontainers.image.ref.name annotation).
func WriteArchive(img v1.Image, ref, path string) error {
	dir, err := os.MkdirTemp("", "codelotse-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tarDir(dir, out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tarDir writes the layout's files in a fixed order with fixed metadata,
// so the same image gives the same archive.
func tarDir(root string, w io.Writer) error {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if info.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		h.Typeflag, h.Size = tar.TypeReg, info.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return tw.Close()
}
