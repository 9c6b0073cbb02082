// Command mkimage writes the codelotse container image as an OCI image
// archive, without a container engine (`make image` runs it).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/codelotse/codelotse/deploy/image"
)

func main() {
	var o image.Options
	var out, ref, created string
	flag.StringVar(&o.Binary, "binary", "", "the static linux binary")
	flag.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to install")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "GOARCH of the binary")
	flag.StringVar(&o.Version, "version", "", "image version label")
	flag.StringVar(&o.Revision, "revision", "", "source revision label")
	flag.StringVar(&o.Source, "source", "https://github.com/codelotse/codelotse", "source repository label")
	flag.StringVar(&created, "created", "0", "creation time, Unix seconds (SOURCE_DATE_EPOCH)")
	flag.StringVar(&ref, "ref", "", "reference name in the archive (default codelotse:VERSION)")
	flag.StringVar(&out, "o", "", "output archive")
	flag.Parse()
	if err := run(o, created, ref, out); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(o image.Options, created, ref, out string) error {
	if o.Binary == "" || out == "" {
		return fmt.Errorf("-binary and -o are required")
	}
	secs, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	o.Created = time.Unix(secs, 0).UTC()
	if ref == "" {
		ref = "codelotse:" + o.Version
	}
	img, err := image.Build(o)
	if err != nil {
		return err
	}
	if err := image.WriteArchive(img, ref, out); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", out, ref, d)
	return nil
}
