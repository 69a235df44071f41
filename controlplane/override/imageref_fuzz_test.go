package override

import "testing"

// FuzzParseImage checks that ParseImage never panics and that what it
// accepts round-trips: String gives back the input, and parsing that again
// gives the same parts.
func FuzzParseImage(f *testing.F) {
	for _, seed := range []string{
		"nginx", "nginx:1.27", "library/nginx", "docker.io/library/nginx:1.27",
		"localhost/app", "localhost:5000/team/app:v1",
		"registry.example.com:443/a/b/c:tag@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"app@sha512:" + "ab" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567" + "cd",
		"Nginx", "nginx:", ":tag", "a//b", "a@md5:00", "", "[::1]:5000/app", "host:port/app:tag:extra",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, image string) {
		ref, err := ParseImage(image)
		if err != nil {
			return
		}
		if got := ref.String(); got != image {
			t.Fatalf("ParseImage(%q).String() = %q, want the input back; parts %+v", image, got, ref)
		}
		again, err := ParseImage(ref.String())
		if err != nil {
			t.Fatalf("ParseImage(%q) accepted, but its String %q is refused: %v", image, ref.String(), err)
		}
		if again != ref {
			t.Fatalf("round trip of %q changed the parts: %+v, then %+v", image, ref, again)
		}
		if ref.Repository == "" {
			t.Fatalf("ParseImage(%q) accepted an empty repository: %+v", image, ref)
		}
	})
}
