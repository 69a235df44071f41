package main

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestUpRefusesBadBackend: bad -backend uses are refused before anything
// starts, and an up over a control plane of the other backend is refused,
// since down removes only what the directory records.
func TestUpRefusesBadBackend(t *testing.T) {
	kindDir := t.TempDir()
	if err := testenv.ClaimDir(kindDir, markerFile, "localup"); err != nil {
		t.Fatal(err)
	}
	st := &state{Dir: kindDir, Backend: backendKind, MemberNames: []string{"member1"}, KindClusters: []string{"flotilla-000000-host"}}
	if err := testenv.WriteState(filepath.Join(kindDir, stateFile), st); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown backend", []string{"-backend", "podman"}, `-backend must be process or kind, got "podman"`},
		{"kind image for processes", []string{"-kind-image", "kindest/node:v1.35.0"}, "-kind-image needs -backend kind"},
		{"unknown api groups", []string{"-api-groups", "kubefed"}, `-api-groups: unknown API groups "kubefed": want "flotilla" or "karmada"`},
		{"process over kind", []string{"-dir", kindDir, "-bin", "go"}, "a kind control plane is up in " + kindDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"up", "-dir", filepath.Join(t.TempDir(), "cp")}, tc.args...)
			err := run(args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("up %q = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

func TestWithWebhookClientCA(t *testing.T) {
	const ca = "/fleet/host1/pki/webhook-client-ca.crt"
	cases := []struct {
		extra []string
		ca    string
		want  []string
	}{
		{nil, ca, nil},
		{[]string{"--webhook-url=https://127.0.0.1:9443"}, ca, []string{"--webhook-url=https://127.0.0.1:9443", "--webhook-client-ca=" + ca}},
		{[]string{"--webhook-url", "https://127.0.0.1:9443"}, ca, []string{"--webhook-url", "https://127.0.0.1:9443", "--webhook-client-ca=" + ca}},
		{[]string{"--webhook-url=https://127.0.0.1:9443", "--webhook-client-ca=/mine"}, ca, []string{"--webhook-url=https://127.0.0.1:9443", "--webhook-client-ca=/mine"}},
		{[]string{"--webhook-url=https://127.0.0.1:9443", "--webhook-client-auth=false"}, ca, []string{"--webhook-url=https://127.0.0.1:9443", "--webhook-client-auth=false"}},
		// A kind host has no such file: the user names one.
		{[]string{"--webhook-url=https://127.0.0.1:9443"}, "", []string{"--webhook-url=https://127.0.0.1:9443"}},
	}
	for _, tc := range cases {
		if got := withWebhookClientCA(tc.extra, tc.ca); !slices.Equal(got, tc.want) {
			t.Errorf("withWebhookClientCA(%q, %q) = %q, want %q", tc.extra, tc.ca, got, tc.want)
		}
	}
}
