package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

func TestWebhookFlags(t *testing.T) {
	cases := []struct {
		cfg     webhookConfig
		wantErr string
	}{
		{webhookConfig{}, ""},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Ignore"}, ""},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Sometimes"}, `--webhook-failure-policy "Sometimes": must be Fail or Ignore`},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: "9443", failurePolicy: "Fail"}, `--webhook-bind-address "9443"`},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":http", failurePolicy: "Fail"}, "the port must be a positive number"},
		{webhookConfig{url: "https://", bindAddress: ":9443", failurePolicy: "Fail"}, "--webhook-url"},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Fail", external: true}, "--webhook-install=false needs --webhook-cert-dir"},
		// Client authentication is on unless turned off by name, and then needs its CA.
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Fail", client: webhookClientAuth{enabled: true}}, "--webhook-client-ca is required"},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Fail", client: webhookClientAuth{enabled: true, caFile: "/nonexistent/ca.crt"}}, "--webhook-client-ca /nonexistent/ca.crt:"},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Fail", client: webhookClientAuth{caFile: "/some/ca.crt"}}, "--webhook-client-auth=false contradicts"},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Fail", client: webhookClientAuth{names: []string{"apiserver"}}}, "--webhook-client-auth=false contradicts"},
	}
	for _, tc := range cases {
		srv, ca, err := tc.cfg.webhookServer()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.wantErr)
		case tc.wantErr == "" && tc.cfg.url != "" && (srv == nil || len(ca) == 0):
			t.Errorf("%+v: no server or CA bundle", tc.cfg)
		case tc.cfg.url == "" && srv != nil:
			t.Errorf("the webhook is off without a URL, got a server")
		}
	}
}

// TestControlplaneServesWebhook runs the controlplane against a real host
// with --webhook-url: the host refuses an invalid policy with the engine's
// message and stores a valid one.
func TestControlplaneServesWebhook(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	port := testkit.FreePort(t)

	// The host presents its webhook client certificate, as a production
	// host configured by --admission-control-config-file does.
	runInProcess(t, controlplaneConfig{
		kubeconfig: host.KubeconfigPath, fleet: "test", metricsAddr: "0", probeAddr: "0", inProcess: true,
		webhook: webhookConfig{url: fmt.Sprintf("https://127.0.0.1:%d", port), bindAddress: fmt.Sprintf("127.0.0.1:%d", port), failurePolicy: "Fail",
			client: webhookClientAuth{enabled: true, caFile: host.WebhookClientCAFile, names: []string{testenv.WebhookClientName}}},
	})

	hub := apiClient(t, host.RESTConfig())
	policy := func(weight int64) *policyv1.PropagationPolicy {
		return &policyv1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: api.PropagationSpec{
				ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
				Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     api.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: api.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &api.ClusterPreferences{StaticWeightList: []api.StaticClusterWeight{
						{TargetCluster: api.ClusterAffinity{ClusterNames: []string{"a"}}, Weight: weight},
					}},
				}},
			},
		}
	}
	want := "staticWeightList[0].weight: Invalid value: 0: must be greater than or equal to 1"
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		last = hub.Create(ctx, policy(0), client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), "denied the request"), nil
	})
	if err != nil {
		t.Fatalf("the host never called the webhook; last create: %v", last)
	}
	if !strings.Contains(last.Error(), want) {
		t.Errorf("refusal %q lacks %q", last, want)
	}
	if err := hub.Create(t.Context(), policy(2)); err != nil {
		t.Errorf("a valid policy is refused: %v", err)
	}
	// The customization handler answers the host too: a script that spins
	// is refused at its budget, a working one stored.
	spin := spinningCustomization()
	if err := hub.Create(t.Context(), spin); err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a spinning customization through the host: %v, want the webhook's refusal naming the budget", err)
	}
	spin.Spec.Customizations.HealthInterpretation.LuaScript = "function InterpretHealth(obj) return true end"
	if err := hub.Create(t.Context(), spin); err != nil {
		t.Errorf("a working customization through the host is refused: %v", err)
	}
}

// writeCertDir writes a CA-signed serving certificate for 127.0.0.1 into a
// new directory the way cert-manager fills a Secret: tls.crt (serving
// certificate then CA), tls.key and ca.crt. It returns the directory and
// the CA PEM.
func writeCertDir(t *testing.T) (string, []byte) {
	t.Helper()
	chain, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, rest := pem.Decode(chain)
	if leaf == nil {
		t.Fatal("no serving certificate in the generated chain")
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{certFile: chain, keyFile: key, caFile: rest} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, rest
}

// serveWebhook starts the webhook server cfg describes on a free loopback
// port and returns its address once it accepts connections.
func serveWebhook(t *testing.T, cfg webhookConfig) (string, []byte) {
	t.Helper()
	return serveWebhookWith(t, cfg, nil)
}

// serveWebhookWith is serveWebhook with register called on the server
// before it starts, to add handlers.
func serveWebhookWith(t *testing.T, cfg webhookConfig, register func(crwebhook.Server)) (string, []byte) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	cfg.bindAddress = addr
	srv, ca, err := cfg.webhookServer()
	if err != nil {
		t.Fatal(err)
	}
	if register != nil {
		register(srv)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				_ = c.Close()
			}
			return err == nil, nil
		}); err != nil {
		t.Fatalf("webhook server on %s never listened: %v", addr, err)
	}
	return addr, ca
}

// handshake reports whether a TLS client trusting only ca accepts the
// certificate served at addr, as the host apiserver does with the
// configuration's caBundle.
func handshake(addr string, ca []byte) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return errors.New("no CA certificate")
	}
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return c.Close()
}

// TestWebhookReplicasShareCertificate runs two webhook servers, as two
// replicas behind one URL would be: with --webhook-cert-dir both serve a
// certificate the one installed CA bundle trusts, whichever the host
// reaches. Without it each made its own CA, so the leader's bundle did not
// trust the other replica (the failure the issue reported).
func TestWebhookReplicasShareCertificate(t *testing.T) {
	dir, caPEM := writeCertDir(t)
	shared := webhookConfig{url: "https://127.0.0.1:9443", failurePolicy: "Fail", certDir: dir}
	addrA, bundleA := serveWebhook(t, shared)
	addrB, bundleB := serveWebhook(t, shared)
	if !bytes.Equal(bundleA, caPEM) || !bytes.Equal(bundleB, caPEM) {
		t.Fatalf("the CA bundle to install is not ca.crt")
	}
	for _, addr := range []string{addrA, addrB} {
		if err := handshake(addr, bundleA); err != nil {
			t.Errorf("replica %s with --webhook-cert-dir: the installed CA bundle does not trust it: %v", addr, err)
		}
	}

	own := webhookConfig{url: "https://127.0.0.1:9443", failurePolicy: "Fail"}
	addrC, leaderBundle := serveWebhook(t, own)
	addrD, _ := serveWebhook(t, own)
	if err := handshake(addrC, leaderBundle); err != nil {
		t.Errorf("self-signed: the leader's own bundle should trust the leader: %v", err)
	}
	if err := handshake(addrD, leaderBundle); err == nil {
		t.Errorf("self-signed: a second replica's certificate is trusted by the leader's bundle; the test proves nothing")
	}
}

func TestWebhookCertDirRefusesBadFiles(t *testing.T) {
	good, _ := writeCertDir(t)
	_, otherCA := writeCertDir(t)
	mismatched := t.TempDir()
	for _, name := range []string{certFile, keyFile} {
		data, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mismatched, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mismatched, caFile), otherCA, 0o600); err != nil {
		t.Fatal(err)
	}
	noCA := t.TempDir()
	for _, name := range []string{certFile, keyFile} {
		data, _ := os.ReadFile(filepath.Join(good, name))
		if err := os.WriteFile(filepath.Join(noCA, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		dir     string
		wantErr string
	}{
		"missing directory":  {filepath.Join(good, "absent"), "load tls.crt and tls.key"},
		"no ca.crt":          {noCA, "read ca.crt"},
		"ca.crt of another":  {mismatched, "tls.crt is not signed by ca.crt"},
		"a matching triplet": {good, ""},
	}
	for name, tc := range cases {
		cfg := webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Fail", certDir: tc.dir}
		_, _, err := cfg.webhookServer()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), "--webhook-cert-dir "+tc.dir+": "+tc.wantErr)):
			t.Errorf("%s: error %v, want %q", name, err, tc.wantErr)
		}
	}
	elsewhere := webhookConfig{url: "https://flotilla-webhook.flotilla-system.svc:443", bindAddress: ":9443", failurePolicy: "Fail", certDir: good}
	if _, _, err := elsewhere.webhookServer(); err == nil || !strings.Contains(err.Error(), "tls.crt does not name the --webhook-url host") {
		t.Errorf("a certificate for 127.0.0.1 behind a URL of another host: error %v", err)
	}
}

// TestWebhookCertDirRotation replaces the files in --webhook-cert-dir, as
// cert-manager does when it renews: the running server serves the new
// certificate without a restart, so certificates never have to outlive
// their renewal.
func TestWebhookCertDirRotation(t *testing.T) {
	dir, oldCA := writeCertDir(t)
	addr, _ := serveWebhook(t, webhookConfig{url: "https://127.0.0.1:9443", failurePolicy: "Fail", certDir: dir})
	if err := handshake(addr, oldCA); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	newCA := rotateCertDir(t, dir)
	// certwatcher reacts to the write at once and polls every 10 s besides.
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return handshake(addr, newCA) == nil, nil }); err != nil {
		t.Fatalf("the server never served the rotated certificate: %v", err)
	}
	if err := handshake(addr, oldCA); err == nil {
		t.Errorf("after rotation the old CA still verifies the served certificate")
	}
}

// TestControlplaneWebhookInstallsSharedCA runs the controlplane against a
// real host with --webhook-cert-dir: the host's configuration trusts
// ca.crt, the host calls the webhook through it, and when the files are
// rotated the leader installs the new ca.crt.
func TestControlplaneWebhookInstallsSharedCA(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	addr := testkit.FreeAddr(t)
	dir, firstCA := writeCertDir(t)
	saved := caRecheck
	caRecheck = 200 * time.Millisecond
	t.Cleanup(func() { caRecheck = saved })

	runInProcess(t, controlplaneConfig{
		kubeconfig: host.KubeconfigPath, fleet: "test", metricsAddr: "0", probeAddr: "0", inProcess: true,
		webhook: webhookConfig{url: "https://" + addr, bindAddress: addr, failurePolicy: "Fail", certDir: dir,
			client: webhookClientAuth{enabled: true, caFile: host.WebhookClientCAFile}},
	})
	hub := apiClient(t, host.RESTConfig())
	installed := func(want []byte) error {
		return wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true,
			func(ctx context.Context) (bool, error) {
				var cfg admissionregistrationv1.ValidatingWebhookConfiguration
				// Not found until the leader installs it: keep polling.
				if err := hub.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName}, &cfg); err != nil {
					return false, client.IgnoreNotFound(err)
				}
				for _, w := range cfg.Webhooks {
					if !bytes.Equal(w.ClientConfig.CABundle, want) {
						return false, nil
					}
				}
				return len(cfg.Webhooks) > 0, nil
			})
	}
	if err := installed(firstCA); err != nil {
		t.Fatalf("the configuration never carried ca.crt: %v", err)
	}
	// The host reaches the webhook through that bundle: an invalid policy
	// is refused by it.
	bad := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: api.PropagationSpec{ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: api.Placement{SpreadConstraints: []api.SpreadConstraint{{SpreadByField: api.SpreadByFieldCluster, MinGroups: 3, MaxGroups: 1}}}}}
	var last error
	denied := func() error {
		return wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true,
			func(ctx context.Context) (bool, error) {
				last = hub.Create(ctx, bad.DeepCopy(), client.DryRunAll)
				return last != nil && strings.Contains(last.Error(), "denied the request"), nil
			})
	}
	if err := denied(); err != nil {
		t.Fatalf("the host never reached the webhook with the shared CA; last create: %v", last)
	}

	nextCA := rotateCertDir(t, dir)
	if err := installed(nextCA); err != nil {
		t.Fatalf("the leader never installed the rotated ca.crt: %v", err)
	}
	if err := denied(); err != nil {
		t.Fatalf("after rotation the host no longer reaches the webhook; last create: %v", last)
	}
}

// rotateCertDir replaces the files in dir with a new key, certificate and
// CA, as cert-manager does when it renews, and returns the new CA.
func rotateCertDir(t *testing.T, dir string) []byte {
	t.Helper()
	next, ca := writeCertDir(t)
	for _, name := range []string{keyFile, certFile, caFile} {
		data, err := os.ReadFile(filepath.Join(next, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca
}
