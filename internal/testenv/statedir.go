package testenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ClaimDir makes dir an empty directory of the command named by, marked by
// a file named marker. It refuses a non-empty directory without the marker,
// so a mistyped -dir never loses someone's files; a marked one (the logs of
// a failed start, whose processes are gone) is emptied.
func ClaimDir(dir, marker, by string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
			return fmt.Errorf("%s is not empty and is not a %s directory; choose another -dir", dir, by)
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	note := fmt.Sprintf("made by `%s up`; `%s down` removes this directory\n", by, by)
	return os.WriteFile(filepath.Join(dir, marker), []byte(note), 0o600)
}

// ReadState reads into st the JSON that WriteState wrote to path.
func ReadState(path string, st any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// WriteState replaces path with st as JSON atomically, so a concurrent
// reader (status, down) never reads half of it.
func WriteState(path string, st any) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
