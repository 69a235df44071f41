package override

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The reference grammar below is the one container runtimes and Karmada's
// imageparser accept (distribution/reference):
//
//	reference := name [ ":" tag ] [ "@" digest ]
//	name      := [ domain "/" ] path-component [ "/" path-component ]*
//
// It is written out here rather than imported so the pure core does not pull
// in the distribution module for one regular expression.
var (
	domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domainHost      = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[[a-fA-F0-9:]+\])`
	domainPattern   = domainHost + `(?::[0-9]+)?`
	pathComponent   = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	namePattern     = `(?:` + domainPattern + `/)?` + pathComponent + `(?:/` + pathComponent + `)*`
	tagPattern      = `[\w][\w.-]{0,127}`
	digestPattern   = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`

	referenceRegexp = regexp.MustCompile(`^(` + namePattern + `)(?::(` + tagPattern + `))?(?:@(` + digestPattern + `))?$`)
	anchoredTag     = regexp.MustCompile(`^` + tagPattern + `$`)
	anchoredDigest  = regexp.MustCompile(`^` + digestPattern + `$`)
)

// maxNameLength is the longest image name (without tag and digest) the
// reference grammar allows.
const maxNameLength = 255

// digestHexLength is the hex length of each digest algorithm a runtime can
// verify; Karmada's parser registers exactly these three.
var digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

var lowerHex = regexp.MustCompile(`^[a-f0-9]+$`)

// ImageRef is a container image reference split the way Karmada's
// imageparser splits it: [registry/]repository[:tag][@digest].
type ImageRef struct {
	// Registry is the host (and optional port) before the first slash; it is
	// set only when that part contains '.' or ':' or is "localhost", so
	// "library/nginx" has no registry and repository "library/nginx".
	Registry string
	// Repository is the path after the registry, e.g. "karmada/controller".
	Repository string
	// Tag is the tag after ':' without the colon, e.g. "v1.0.0".
	Tag string
	// Digest is the content digest after '@' without the at sign, e.g.
	// "sha256:<64 hex>".
	Digest string
}

// ParseImage splits an image reference. It rejects what a container runtime
// would reject: an empty reference, upper-case repositories, bad tags and
// digests of unknown algorithms or wrong length.
func ParseImage(image string) (ImageRef, error) {
	if image == "" {
		return ImageRef{}, errors.New("image reference is empty")
	}
	m := referenceRegexp.FindStringSubmatch(image)
	if m == nil {
		if referenceRegexp.MatchString(strings.ToLower(image)) {
			return ImageRef{}, fmt.Errorf("image reference %q: repository name must be lowercase", image)
		}
		return ImageRef{}, fmt.Errorf("image reference %q has an invalid format", image)
	}
	name, tag, digest := m[1], m[2], m[3]
	if len(name) > maxNameLength {
		return ImageRef{}, fmt.Errorf("image reference %q: name is longer than %d characters", image, maxNameLength)
	}
	if digest != "" {
		if err := validateDigest(digest); err != nil {
			return ImageRef{}, fmt.Errorf("image reference %q: %w", image, err)
		}
	}
	registry, repository := splitRegistry(name)
	return ImageRef{Registry: registry, Repository: repository, Tag: tag, Digest: digest}, nil
}

// splitRegistry treats the first path element as a registry only when it
// looks like a host, as Docker and Karmada do; no default registry or
// "library/" prefix is invented.
func splitRegistry(name string) (registry, repository string) {
	i := strings.IndexByte(name, '/')
	if i < 0 {
		return "", name
	}
	first := name[:i]
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "", name
	}
	return first, name[i+1:]
}

func validateDigest(digest string) error {
	algorithm, hex, _ := strings.Cut(digest, ":")
	want, ok := digestHexLength[algorithm]
	if !ok {
		return fmt.Errorf("unsupported digest algorithm %q", algorithm)
	}
	if len(hex) != want || !lowerHex.MatchString(hex) {
		return fmt.Errorf("digest %q must be %d lower-case hex characters", digest, want)
	}
	return nil
}

// String joins the parts back into a reference. Unlike Karmada's parser it
// keeps a digest next to a tag ("name:tag@digest"), so overriding the
// registry of a pinned image does not silently drop the pin.
func (r ImageRef) String() string {
	var b strings.Builder
	if r.Registry != "" {
		b.WriteString(r.Registry)
		b.WriteByte('/')
	}
	b.WriteString(r.Repository)
	if r.Tag != "" {
		b.WriteByte(':')
		b.WriteString(r.Tag)
	}
	if r.Digest != "" {
		b.WriteByte('@')
		b.WriteString(r.Digest)
	}
	return b.String()
}

// tagOrDigest is what Karmada's Tag component reads: the tag when there is
// one, else the digest.
func (r ImageRef) tagOrDigest() string {
	if r.Tag != "" {
		return r.Tag
	}
	return r.Digest
}

// setTagOrDigest stores value as a tag or a digest, whichever it parses as,
// and clears the other: a new tag next to an old digest would still pull the
// old image.
func (r *ImageRef) setTagOrDigest(value string) error {
	switch {
	case anchoredTag.MatchString(value):
		r.Tag, r.Digest = value, ""
	case anchoredDigest.MatchString(value):
		if err := validateDigest(value); err != nil {
			return err
		}
		r.Tag, r.Digest = "", value
	default:
		return fmt.Errorf("%q is neither a valid tag nor a digest", value)
	}
	return nil
}

// removeTagOrDigest removes the tag if there is one, else the digest, as
// Karmada does.
func (r *ImageRef) removeTagOrDigest() {
	if r.Tag != "" {
		r.Tag = ""
		return
	}
	r.Digest = ""
}
