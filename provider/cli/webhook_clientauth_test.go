package cli

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// countingServer counts the requests that reach any handler.
type countingServer struct {
	webhook.Server
	served *atomic.Int32
}

func (s countingServer) Register(path string, h http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.served.Add(1)
		h.ServeHTTP(w, r)
	}))
}

// spinningCustomization is a ResourceInterpreterCustomization whose script
// loops at load time: validating it runs the interpreter to its budget.
func spinningCustomization() *configv1.ResourceInterpreterCustomization {
	r := &configv1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "spin"},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target: api.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Spin"},
			Customizations: api.CustomizationRules{HealthInterpretation: &api.LuaScript{
				LuaScript: "while true do end\nfunction InterpretHealth(obj) return true end"}},
		},
	}
	r.SetGroupVersionKind(configv1.GroupVersion.WithKind(api.KindResourceInterpreterCustomization))
	return r
}

// postReview sends an AdmissionReview creating obj to url with httpc and
// returns the response.
func postReview(t *testing.T, httpc *http.Client, url string, obj runtime.Object, resource string) (*admissionv1.AdmissionResponse, error) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "1", Operation: admissionv1.Create, Name: "spin",
			Kind:     metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
			Resource: metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: resource},
			Object:   runtime.RawExtension{Raw: raw},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := httpc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer func() { _ = res.Body.Close() }()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.Response == nil {
		return nil, fmt.Errorf("status %s: no admission response (%v)", res.Status, err)
	}
	return out.Response, nil
}

// TestWebhookRefusesUnauthenticatedCaller attacks the webhook as anyone
// who reaches its port: an AdmissionReview of a customization whose script
// spins, sent without a client certificate, with one from another CA, and
// with one of the right CA but a name outside --webhook-client-names, is
// refused in the TLS handshake, before any handler (and so any script)
// runs. The host's certificate is served and its review answered.
func TestWebhookRefusesUnauthenticatedCaller(t *testing.T) {
	const hostName = "kube-apiserver-webhook-client"
	hostCA, otherCA := testkit.NewClientCA(t, "host-webhook-client-ca"), testkit.NewClientCA(t, "another-ca")
	var served atomic.Int32
	scheme, err := shared.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg := webhookConfig{url: "https://127.0.0.1:9443", failurePolicy: "Fail",
		client: webhookClientAuth{enabled: true, caFile: hostCA.File(t), names: []string{hostName}}}
	addr, servingCA := serveWebhookWith(t, cfg, func(srv crwebhook.Server) {
		webhook.Register(countingServer{Server: srv, served: &served}, scheme, webhook.Options{})
	})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(servingCA)
	caller := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, GetClientCertificate: testkit.Present(certs...), MinVersion: tls.VersionTLS12,
		}}}
	}
	url := "https://" + addr + webhook.PathResourceInterpreterCustomization
	for name, httpc := range map[string]*http.Client{
		"no client certificate":         caller(),
		"a certificate of another CA":   caller(otherCA.Client(t, hostName)),
		"a name outside the allow list": caller(hostCA.Client(t, "system:anonymous")),
	} {
		resp, err := postReview(t, httpc, url, spinningCustomization(), "resourceinterpretercustomizations")
		if err == nil {
			t.Errorf("%s: the webhook answered (allowed %v, %v); it must refuse the connection", name, resp.Allowed, resp.Result)
			continue
		}
		t.Logf("%s: refused: %v", name, err)
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("%d unauthenticated review(s) reached a handler, which runs the script", n)
	}

	resp, err := postReview(t, caller(hostCA.Client(t, hostName)), url, spinningCustomization(), "resourceinterpretercustomizations")
	if err != nil {
		t.Fatalf("the host's certificate: %v", err)
	}
	if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, "budget") {
		t.Errorf("the spinning script from the host: allowed %v (%v), want a refusal naming the budget", resp.Allowed, resp.Result)
	}
	if n := served.Load(); n != 1 {
		t.Errorf("handlers served %d reviews, want the host's 1", n)
	}
}

// TestWebhookClientCARotation replaces --webhook-client-ca's file, as a
// mounted Secret or ConfigMap is updated: the running server trusts the
// new CA's certificates and no longer the old one's, without a restart.
func TestWebhookClientCARotation(t *testing.T) {
	first, next := testkit.NewClientCA(t, "first"), testkit.NewClientCA(t, "next")
	caFile := first.File(t)
	addr, servingCA := serveWebhook(t, webhookConfig{url: "https://127.0.0.1:9443", failurePolicy: "Fail",
		client: webhookClientAuth{enabled: true, caFile: caFile}})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(servingCA)
	// The handshake completes on the client's side before the server has
	// checked its certificate (TLS 1.3), so the verdict is read.
	accepted := func(cert tls.Certificate) error {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, GetClientCertificate: testkit.Present(cert), MinVersion: tls.VersionTLS12})
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		if _, err := c.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
			return err
		}
		_, err = c.Read(make([]byte, 1))
		return err
	}
	if err := accepted(first.Client(t, "host")); err != nil {
		t.Fatalf("before rotation, the first CA's client: %v", err)
	}
	if err := os.WriteFile(caFile, next.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 90*time.Second, "the next CA's client accepted", func() (bool, string) {
		err := accepted(next.Client(t, "host"))
		return err == nil, fmt.Sprint(err)
	})
	if err := accepted(first.Client(t, "host")); err == nil {
		t.Errorf("after rotation the first CA's client is still accepted")
	}
}
