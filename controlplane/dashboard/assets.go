package dashboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// assets are the embedded script and style sheet, served under names that
// carry a digest of their content (app.3f9c2a1b.css) so a browser keeps
// them across navigations and refreshes without asking again: a page then
// costs one request, not three, each through the host's access checks,
// and its script is not held up behind a style sheet being fetched anew.
// A new build changes the digest, hence the name.
type assets struct {
	// byName holds each asset under its fingerprinted name.
	byName map[string][]byte
	// names maps a plain name (app.css) to its fingerprinted one.
	names map[string]string
}

// assetMaxAge is how long a browser keeps a fingerprinted asset.
const assetMaxAge = 365 * 24 * time.Hour

func loadAssets(static fs.FS) (*assets, error) {
	a := &assets{byName: map[string][]byte{}, names: map[string]string{}}
	entries, err := fs.ReadDir(static, ".")
	if err != nil {
		return nil, fmt.Errorf("dashboard: read assets: %w", err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(static, e.Name())
		if err != nil {
			return nil, fmt.Errorf("dashboard: read asset %s: %w", e.Name(), err)
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(e.Name())
		fingerprinted := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:4]) + ext
		a.byName[fingerprinted] = b
		a.names[e.Name()] = fingerprinted
	}
	return a, nil
}

// url is the address of the asset named plain, for the pages.
func (a *assets) url(plain string) (string, error) {
	n, ok := a.names[plain]
	if !ok {
		return "", fmt.Errorf("no asset %s", plain)
	}
	return "/static/" + n, nil
}

// serve answers GET /static/{file} for a fingerprinted name; any other
// name is left to next (the plain names, not cached).
func (a *assets) serve(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := a.byName[r.PathValue("file")]
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		// private: it is served behind the access checks, so shared
		// caches must not keep it; the content never changes under
		// this name.
		w.Header().Set("Cache-Control", fmt.Sprintf("private, max-age=%d, immutable", int(assetMaxAge.Seconds())))
		w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(r.URL.Path)))
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	})
}
