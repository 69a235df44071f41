package agent_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/work"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestAgentSaysWhyUnsigned: with no control plane running, Works that claim
// the control plane's verification of their generation are written into a
// Pull cluster's execution namespace, one without a signature and one with
// a signature the published key does not verify. The agent, with the
// identity `register` gives it, applies neither and says why on each Work:
// Applied=False, SignatureMissing or SignatureInvalid, naming the Work and
// the cluster.
func TestAgentSaysWhyUnsigned(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, pulled := fleet.Clusters[0], fleet.Clusters[1]
	hub := controllertest.SystemHost(t, host)
	ctx := t.Context()
	reg, err := agent.RegisterAgent(ctx, hub, pulled.Name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// A key published on the Cluster as the control plane publishes its
	// own: the forger does not hold its private half.
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var cl clusterv1.Cluster
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: pulled.Name}, &cl, func() {
		if cl.Annotations == nil {
			cl.Annotations = map[string]string{}
		}
		cl.Annotations[work.AnnotationSigningKey] = base64.StdEncoding.EncodeToString(pub)
	})
	mc, err := member.NewCache(member.CacheOptions{}).Get(ctx, pulled.Name, member.Connection{Host: pulled.Host, Token: pulled.Token, ClusterCACertificate: pulled.CAData})
	if err != nil {
		t.Fatal(err)
	}
	opts := agent.AgentOptions{Cluster: pulled.Name, LeaseDuration: 2 * time.Second, RenewInterval: 300 * time.Millisecond, StatusInterval: 300 * time.Millisecond, Options: controllertest.Options("test")}
	controllertest.StartManager(t, agentHubConfig(host, reg.Token), ctrl.Options{Scheme: controllertest.Scheme(t), Cache: agent.AgentCacheOptions(pulled.Name)},
		func(mgr manager.Manager) error { return agent.SetupAgent(mgr, mc, opts) })

	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment", UID: "not-a-binding"}}
	forge := func(name string, signature string) *workv1.Work {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		w := controllertest.ForgedWork(t, rb, pulled.Name, name, cm)
		w.Annotations[work.AnnotationVerifiedGeneration] = "1"
		if signature != "" {
			w.Annotations[work.AnnotationWorkSignature] = signature
		}
		testkit.MustCreate(t, hub, w)
		return w
	}
	unsigned := forge("unsigned", "")
	badly := forge("badly-signed", base64.StdEncoding.EncodeToString(make([]byte, ed25519.SignatureSize)))
	memberClient := controllertest.Client(t, pulled.RESTConfig(), hub.Scheme())
	for _, c := range []struct {
		w      *workv1.Work
		reason string
	}{{unsigned, api.ReasonSignatureMissing}, {badly, api.ReasonSignatureInvalid}} {
		key := client.ObjectKeyFromObject(c.w)
		testkit.Eventually(t, controllertest.Deadline, "work "+key.String()+" says "+c.reason, func() (bool, string) {
			var w workv1.Work
			if err := hub.Get(ctx, key, &w); err != nil {
				return false, err.Error()
			}
			cond := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
			ok := cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == c.reason &&
				strings.Contains(cond.Message, "work "+key.String()) && strings.Contains(cond.Message, "cluster "+pulled.Name)
			return ok, fmt.Sprintf("conditions %+v", w.Status.Conditions)
		})
		controllertest.AbsentFor(t, memberClient, &corev1.ConfigMap{}, client.ObjectKey{Namespace: "default", Name: c.w.Name}, time.Second)
	}
}
