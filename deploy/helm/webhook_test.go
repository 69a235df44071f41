package helm

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// webhookAdmits sends the webhook at addr, as the host would through the
// chart's Service (trusting ca for the Service's name, presenting the
// host's webhook client certificate), the creation of a
// Cluster whose credentials are the member's Secret, which it admits, and
// of one whose Secret holds a kubeconfig that runs a command, which it
// refuses: both need the Secret read with the ServiceAccount's rights.
func webhookAdmits(t *testing.T, admin client.Client, addr string, ca []byte, host tls.Certificate, member string) {
	t.Helper()
	testkit.MustCreate(t, admin, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "runs-a-command"},
		Data: map[string][]byte{clusterv1.SecretKeyKubeconfig: []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)},
	})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: "flotilla-webhook.flotilla-system.svc", MinVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{host},
	}}}
	for _, tc := range []struct {
		secret string
		allow  bool
	}{{member, true}, {"runs-a-command", false}} {
		cl := controllertest.ClusterObject("candidate", "https://127.0.0.1:1", namespace)
		cl.Spec.SecretRef.Name = tc.secret
		cl.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster"))
		var resp *admissionv1.AdmissionResponse
		testkit.Eventually(t, 30*time.Second, "the webhook's answer for Secret "+tc.secret, func() (bool, string) {
			var err error
			resp, err = review(t, httpc, "https://"+addr+webhook.PathCluster, cl)
			return err == nil, fmt.Sprint(err)
		})
		msg := ""
		if resp.Result != nil {
			msg = resp.Result.Message
		}
		// The refusal must be the exec plugin read from the Secret, not a failed read.
		if resp.Allowed != tc.allow || (!tc.allow && !strings.Contains(msg, "exec (a credential plugin")) {
			t.Errorf("Cluster with Secret %s: allowed %v (%q), want %v", tc.secret, resp.Allowed, msg, tc.allow)
		}
	}
	// The server answered the host above; without the host's certificate
	// it refuses the connection.
	anonymous := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: "flotilla-webhook.flotilla-system.svc", MinVersion: tls.VersionTLS12,
	}}}
	if resp, err := review(t, anonymous, "https://"+addr+webhook.PathCluster, controllertest.ClusterObject("candidate", "https://127.0.0.1:1", namespace)); err == nil {
		t.Errorf("a caller without a client certificate got an answer (allowed %v)", resp.Allowed)
	}
}

// review posts an AdmissionReview creating obj and returns the response.
func review(t *testing.T, httpc *http.Client, url string, obj runtime.Object) (*admissionv1.AdmissionResponse, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "1", Operation: admissionv1.Create, Name: "candidate",
			Kind:     metav1.GroupVersionKind{Group: clusterv1.GroupVersion.Group, Version: clusterv1.GroupVersion.Version, Kind: "Cluster"},
			Resource: metav1.GroupVersionResource{Group: clusterv1.GroupVersion.Group, Version: clusterv1.GroupVersion.Version, Resource: "clusters"},
			Object:   runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := httpc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = res.Body.Close() }()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("status %s: %w", res.Status, err)
	}
	if out.Response == nil {
		return nil, fmt.Errorf("status %s: no response", res.Status)
	}
	return out.Response, nil
}
