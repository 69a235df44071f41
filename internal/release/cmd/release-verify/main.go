// Command release-verify checks a release directory that scripts/release.sh
// wrote (see internal/release) and prints what it holds; `make
// release-snapshot` runs it last:
//
//	go run ./internal/release/cmd/release-verify bin/release
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/release"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: release-verify <release directory>")
		os.Exit(2)
	}
	r, err := release.Verify(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "release-verify: %v\n", err)
		os.Exit(1)
	}
	platforms := make([]string, 0, len(r.Zips))
	for p := range r.Zips {
		platforms = append(platforms, p)
	}
	slices.Sort(platforms)
	signed := "unsigned"
	if r.Signature != "" {
		signed = "signed"
	}
	fmt.Printf("release %s verified: provider zips for %s, checksums %s; image, Crossplane package and %d charts at %s\n",
		r.Version, strings.Join(platforms, " "), signed, len(r.Charts), r.Version)
}
