package image

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestImageBinaryRunsControlplane runs the image's binary as `controlplane`
// against a real host apiserver: it installs flotilla's CRDs, reports
// ready on its probe address, keeps running, and stops cleanly on SIGTERM
// as a container runtime would stop it.
func TestImageBinaryRunsControlplane(t *testing.T) {
	bin, _ := imageBinary(t)
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	probe := freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "controlplane", "--kubeconfig", host.KubeconfigPath,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address="+probe)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill() // the one process this test started, by PID
			<-exited
		}
		if t.Failed() {
			t.Logf("controlplane output:\n%s", logs.String())
		}
	})

	httpc := &http.Client{Timeout: 2 * time.Second}
	ready := func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			t.Fatalf("controlplane exited before it was ready: %v", waitErr)
		default:
		}
		return answers200(ctx, httpc, "http://"+probe+"/readyz"), nil
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 90*time.Second, true, ready); err != nil {
		t.Fatalf("controlplane never became ready on %s: %v", probe, err)
	}
	dyn, err := dynamic.NewForConfig(host.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Get(t.Context(), "propagationpolicies.policy.flotilla.io", metav1.GetOptions{}); err != nil {
		t.Errorf("the controlplane did not install its CRDs: %v", err)
	}
	// A few seconds of running: reconcilers started, nothing crashed.
	select {
	case <-exited:
		t.Fatalf("controlplane exited while running: %v", waitErr)
	case <-time.After(3 * time.Second):
	}
	if ok, _ := ready(t.Context()); !ok {
		t.Error("controlplane stopped being ready")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("controlplane exited with %v after SIGTERM, want 0", waitErr)
		}
	case <-time.After(30 * time.Second):
		t.Error("controlplane did not stop within 30s of SIGTERM")
	}
}

// TestImageReproducible builds the image a second time, binary included,
// from a copy of the checkout in another directory (as CI's fresh clone
// lies elsewhere), and expects the same digest: the same commit gives the
// same image wherever it is built.
func TestImageReproducible(t *testing.T) {
	_, first, src := sharedImage(t)
	dir := t.TempDir()
	src.Dir = copyCheckout(t, moduleRoot(t), filepath.Join(dir, "src"))
	layoutDir, err := buildLayout(t.Context(), src, dir)
	if err != nil {
		t.Fatalf("second build: %v", err)
	}
	_, second := readLayout(t, layoutDir)
	if first.Digest != second.Digest {
		t.Errorf("two builds of revision %s gave digests %s and %s", src.Revision, first.Digest, second.Digest)
	}
	a, err := os.ReadFile(filepath.Join(built.root, "image", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(layoutDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the two layouts' index.json differ:\n%s\n%s", a, b)
	}
}

// copyCheckout copies the files git sees in root (tracked, and untracked
// but not ignored, as they are on disk) to dst, without .git: the binary
// is built without a VCS stamp, so the copy builds the same bytes.
func copyCheckout(t *testing.T, root, dst string) string {
	t.Helper()
	list := gitOut(t, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, name := range strings.Split(list, "\x00") {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// answers200 reports whether url answers 200 OK; not listening yet is a no.
func answers200(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
