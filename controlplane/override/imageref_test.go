package override

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	sha256Hex = "50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c"
	digestA   = "sha256:" + sha256Hex
	digestB   = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"
)

func TestParseImage(t *testing.T) {
	cases := map[string]struct {
		image   string
		want    ImageRef
		wantErr string
	}{
		"bare name":           {image: "nginx", want: ImageRef{Repository: "nginx"}},
		"name and tag":        {image: "nginx:1.27", want: ImageRef{Repository: "nginx", Tag: "1.27"}},
		"path without host":   {image: "library/nginx:1.27", want: ImageRef{Repository: "library/nginx", Tag: "1.27"}},
		"registry with dot":   {image: "registry.k8s.io/kube-apiserver:v1.35.4", want: ImageRef{Registry: "registry.k8s.io", Repository: "kube-apiserver", Tag: "v1.35.4"}},
		"registry with port":  {image: "fictional.registry.example:10443/karmada/controller:v1.0.0", want: ImageRef{Registry: "fictional.registry.example:10443", Repository: "karmada/controller", Tag: "v1.0.0"}},
		"port without dot":    {image: "myhost:5000/app", want: ImageRef{Registry: "myhost:5000", Repository: "app"}},
		"localhost":           {image: "localhost/app:dev", want: ImageRef{Registry: "localhost", Repository: "app", Tag: "dev"}},
		"ipv6 registry":       {image: "[::1]:5000/app:v1", want: ImageRef{Registry: "[::1]:5000", Repository: "app", Tag: "v1"}},
		"digest only":         {image: "nginx@" + digestA, want: ImageRef{Repository: "nginx", Digest: digestA}},
		"tag and digest":      {image: "quay.io/org/app:v2@" + digestA, want: ImageRef{Registry: "quay.io", Repository: "org/app", Tag: "v2", Digest: digestA}},
		"separators in path":  {image: "a/b__c/d-e--f/g.h_i:tag_1.x-y", want: ImageRef{Repository: "a/b__c/d-e--f/g.h_i", Tag: "tag_1.x-y"}},
		"empty":               {image: "", wantErr: "image reference is empty"},
		"upper-case name":     {image: "Docker.io/NGINX", wantErr: "must be lowercase"},
		"bad format":          {image: "nginx:", wantErr: "invalid format"},
		"space":               {image: "nginx 1.27", wantErr: "invalid format"},
		"tag too long":        {image: "nginx:" + strings.Repeat("a", 129), wantErr: "invalid format"},
		"name too long":       {image: strings.Repeat("a", 256), wantErr: "longer than 255"},
		"unknown digest algo": {image: "nginx@md5:" + sha256Hex, wantErr: `unsupported digest algorithm "md5"`},
		"short sha256":        {image: "nginx@sha256:" + sha256Hex[:32], wantErr: "must be 64 lower-case hex"},
		"upper-case digest":   {image: "nginx@sha256:" + strings.ToUpper(sha256Hex), wantErr: "must be 64 lower-case hex"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseImage(tc.image)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseImage(%q) error = %v, want one containing %q", tc.image, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseImage(%q): %v", tc.image, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseImage(%q) (-want +got):\n%s", tc.image, diff)
			}
			if s := got.String(); s != tc.image {
				t.Errorf("String() = %q, want the input %q back", s, tc.image)
			}
		})
	}
}
