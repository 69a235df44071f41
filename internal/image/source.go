package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Source says which code an image is built from: the version and revision
// written into the binary and the image's labels, and the time every
// timestamp in the image is set to.
type Source struct {
	// Dir is the root of flotilla's Go module.
	Dir string
	// Version is `git describe --tags --always --dirty` unless set: a tag,
	// or the abbreviated commit, with -dirty for uncommitted changes.
	Version string
	// Revision is the full commit hash.
	Revision string
	// Time is the commit time (SOURCE_DATE_EPOCH when set), in UTC.
	Time time.Time
}

// SourceDateEpochEnv is the reproducible-builds.org variable that overrides
// the commit time as the image's timestamp.
const SourceDateEpochEnv = "SOURCE_DATE_EPOCH"

// FromGit reads Version, Revision and Time of the checkout at dir with git.
// SOURCE_DATE_EPOCH, when set, replaces the commit time.
func FromGit(ctx context.Context, dir string) (Source, error) {
	s := Source{Dir: dir}
	var err error
	if s.Revision, err = git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return Source{}, err
	}
	if s.Version, err = git(ctx, dir, "describe", "--tags", "--always", "--dirty", "--abbrev=12"); err != nil {
		return Source{}, err
	}
	epoch := os.Getenv(SourceDateEpochEnv)
	if epoch == "" {
		if epoch, err = git(ctx, dir, "log", "-1", "--format=%ct", "HEAD"); err != nil {
			return Source{}, err
		}
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || sec < 0 {
		return Source{}, fmt.Errorf("%s (or the commit time) %q is not a non-negative number of seconds", SourceDateEpochEnv, epoch)
	}
	s.Time = time.Unix(sec, 0).UTC()
	return s, nil
}

// validate names the first field a Build cannot do without.
func (s Source) validate() error {
	switch {
	case s.Dir == "":
		return errors.New("image source: Dir (the module root) is empty")
	case s.Version == "":
		return errors.New("image source: Version is empty")
	case s.Revision == "":
		return errors.New("image source: Revision is empty")
	case s.Time.IsZero():
		return errors.New("image source: Time is zero")
	}
	return nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
