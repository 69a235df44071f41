package work_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestTemplateCannotMarkItselfAdopted: a template that carries
// flotilla.io/adopted=true and other keys of flotilla's own domain is
// propagated without them, and its copies, which flotilla created, are
// deleted when a policy change moves the template off a member and when
// the template is deleted, not released as if flotilla had adopted them.
func TestTemplateCannotMarkItselfAdopted(t *testing.T) {
	t.Parallel()
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	key := client.ObjectKey{Namespace: "default", Name: "marked"}
	pp := controllertest.CreatePolicy(t, hub, apitest.MakePropagationPolicy("marked", "default").SelectName("v1", "ConfigMap", "marked").ClusterNames(names[0]))
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Labels:      map[string]string{"app": "marked", shared.LabelBindingPermanentID: "forged"},
		Annotations: map[string]string{"flotilla.io/adopted": "true", shared.AnnotationConflictResolution: "Overwrite", "team": "a"},
	}, Data: map[string]string{"k": "v"}})
	var cm corev1.ConfigMap
	testkit.Eventually(t, controllertest.Deadline, "the ConfigMap in "+names[0], func() (bool, string) {
		err := env.Members[names[0]].Get(ctx, key, &cm)
		return err == nil, fmt.Sprint(err)
	})
	for k := range cm.Labels {
		if strings.Contains(k, "flotilla.io/") && k != render.LabelFleet && k != render.LabelTemplateID {
			t.Errorf("member copy carries the template's reserved label %s=%s", k, cm.Labels[k])
		}
	}
	for k := range cm.Annotations {
		if strings.Contains(k, "flotilla.io/") && k != render.AnnotationTemplate && k != render.AnnotationRenderedHash {
			t.Errorf("member copy carries the template's reserved annotation %s=%s", k, cm.Annotations[k])
		}
	}
	if cm.Labels["app"] != "marked" || cm.Annotations["team"] != "a" {
		t.Errorf("member copy lost the template's own keys: labels %v annotations %v", cm.Labels, cm.Annotations)
	}

	t.Log("the policy moves the template off " + names[0] + ": the copy flotilla created there is deleted")
	controllertest.PlaceOn(t, hub, pp, names[1])
	testkit.Eventually(t, controllertest.Deadline, "the copy gone from "+names[0]+" and made in "+names[1], func() (bool, string) {
		err0 := env.Members[names[0]].Get(ctx, key, &corev1.ConfigMap{})
		err1 := env.Members[names[1]].Get(ctx, key, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err0) && err1 == nil, fmt.Sprintf("%s: %v; %s: %v", names[0], err0, names[1], err1)
	})

	t.Log("the template is deleted: its copy is deleted too")
	if err := hub.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "the copy gone from "+names[1], func() (bool, string) {
		err := env.Members[names[1]].Get(ctx, key, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// TestEditedWorksAreNeverApplied: a Work whose manifest someone with write
// access to its execution namespace changed never reaches its member, not
// even before the binding controller writes it back, for a plain Work and
// for the Work a staged rollout holds at the previous rendering (which
// the binding controller never writes back).
func TestEditedWorksAreNeverApplied(t *testing.T) {
	t.Parallel()
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()

	t.Log("a plain Work: the edit is written back and never applied")
	controllertest.Namespaces(t, env.Hub, "tenant-b")
	workKey := victim(t, env, "victim", names[0])
	victim := client.ObjectKey{Namespace: "tenant-b", Name: "victim"}
	seen := watchData(t, env, names[0], victim, "owner")
	editWork(t, hub, workKey, func(cm *corev1.ConfigMap) { cm.Data["owner"] = "attacker" })
	testkit.Eventually(t, controllertest.Deadline, "the Work written back", func() (bool, string) {
		data := workData(t, hub, workKey)
		return data["owner"] == "tenant-b", fmt.Sprintf("work data %v", data)
	})
	time.Sleep(3 * time.Second) // a few resyncs of the execution controller
	if got := seen(); strings.Contains(got, "attacker") {
		t.Errorf("the edited manifest reached %s: the member's ConfigMap was %s", names[0], got)
	}

	t.Log("a namespace sync's Work: the edit is written back and never applied")
	var nsWorks workv1.WorkList
	if err := hub.List(ctx, &nsWorks, client.InNamespace(shared.ExecutionNamespace(names[0])), client.MatchingLabels{shared.LabelNamespaceSyncName: "tenant-b"}); err != nil || len(nsWorks.Items) != 1 {
		t.Fatalf("the namespace sync's Work of tenant-b in %s: %v, %d found", names[0], err, len(nsWorks.Items))
	}
	nsWork := client.ObjectKeyFromObject(&nsWorks.Items[0])
	nsSeen := watchNamespaceLabel(t, env, names[0], "tenant-b", "attacker")
	editWork(t, hub, nsWork, func(ns *corev1.Namespace) { metav1.SetMetaDataLabel(&ns.ObjectMeta, "attacker", "yes") })
	testkit.Eventually(t, controllertest.Deadline, "the namespace Work written back", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(ctx, nsWork, &w); err != nil {
			return false, err.Error()
		}
		return !strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), "attacker"), string(w.Spec.Workload.Manifests[0].Raw)
	})
	time.Sleep(3 * time.Second)
	if got := nsSeen(); strings.Contains(got, "yes") {
		t.Errorf("the edited namespace Work reached %s: the member namespace's label attacker was %s", names[0], got)
	}
	// The sync's own change still reaches the member.
	var hostNS corev1.Namespace
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: "tenant-b"}, &hostNS, func() {
		metav1.SetMetaDataLabel(&hostNS.ObjectMeta, "team", "b")
	})
	testkit.Eventually(t, controllertest.Deadline, "the host namespace's new label in "+names[0], func() (bool, string) {
		var m corev1.Namespace
		if err := env.Members[names[0]].Get(ctx, client.ObjectKey{Name: "tenant-b"}, &m); err != nil {
			return false, err.Error()
		}
		return m.Labels["team"] == "b", fmt.Sprintf("labels %v", m.Labels)
	})

	t.Log("a held rollout stage: the edit is never applied")
	held := client.ObjectKey{Namespace: "default", Name: "staged"}
	pp := controllertest.CreatePolicy(t, hub, apitest.MakePropagationPolicy("staged", "default").SelectName("v1", "ConfigMap", "staged").ClusterNames(names[0], names[1]))
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: held.Namespace, Name: held.Name}, Data: map[string]string{"v": "1"}})
	waitData(t, env, names[0], held, "v", "1")
	waitData(t, env, names[1], held, "v", "1")
	// The canary's gate bakes for an hour: the rest holds the previous
	// rendering for the whole test.
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.Rollout = &api.RolloutStrategy{Stages: []api.RolloutStage{
			{Name: "canary", ClusterAffinity: apitest.MakeAffinity().Names(names[0]).Obj(), Gate: &api.RolloutGate{BakeSeconds: 3600, TimeoutSeconds: ptr.To[int32](7200)}},
			{Name: "rest"},
		}}
	})
	var tmpl corev1.ConfigMap
	testkit.MustUpdate(t, hub, held, &tmpl, func() {
		tmpl.Data["v"] = "2"
	})
	waitData(t, env, names[0], held, "v", "2")
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Kind: "ConfigMap"}, "staged")}
	heldWork := client.ObjectKey{Namespace: shared.ExecutionNamespace(names[1]), Name: shared.WorkName(api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "staged"})}
	// A ConfigMap has no generation, so the revision stays; the held
	// Work and a rollout status written by a pass over it tell.
	testkit.Eventually(t, controllertest.Deadline, names[1]+" held at the previous rendering", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		st := rb.Status.Rollout
		data := workData(t, hub, heldWork)
		return st != nil && st.Stage == "canary" && len(st.Clusters) == 2 && data["v"] == "1", fmt.Sprintf("rollout %+v, held work data %v", st, data)
	})
	seen = watchData(t, env, names[1], held, "v")
	editWork(t, hub, heldWork, func(cm *corev1.ConfigMap) { cm.Data["v"] = "attacker" })
	controllertest.WaitWorkRefused(t, hub, heldWork, "nor the rendering its staged rollout holds there")
	time.Sleep(3 * time.Second)
	if got := seen(); strings.Contains(got, "attacker") {
		t.Errorf("the edited held manifest reached %s: the member's ConfigMap was %s", names[1], got)
	}
	waitData(t, env, names[1], held, "v", "1")
}

// editWork changes the object (a T) a Work carries, as someone with write
// access to its execution namespace would.
func editWork[T any](t *testing.T, hub client.Client, key client.ObjectKey, edit func(*T)) {
	t.Helper()
	var w workv1.Work
	testkit.MustUpdate(t, hub, key, &w, func() {
		var obj T
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
			t.Fatal(err)
		}
		edit(&obj)
		raw, err := json.Marshal(&obj)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests[0] = api.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	})
}

// workData is the data of the ConfigMap a Work carries.
func workData(t *testing.T, hub client.Client, key client.ObjectKey) map[string]string {
	t.Helper()
	var w workv1.Work
	if err := hub.Get(t.Context(), key, &w); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// waitData waits until a member's ConfigMap has data[k] == v.
func waitData(t *testing.T, env controllertest.Fleet, cluster string, key client.ObjectKey, k, v string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("%s in %s has %s=%s", key, cluster, k, v), func() (bool, string) {
		var cm corev1.ConfigMap
		if err := env.Members[cluster].Get(t.Context(), key, &cm); err != nil {
			return false, err.Error()
		}
		return cm.Data[k] == v, fmt.Sprintf("data %v", cm.Data)
	})
}

// watchData watches a member's ConfigMap from now on and returns what
// every version of it held in data[k], so a value that was there only for
// a moment is seen too.
func watchData(t *testing.T, env controllertest.Fleet, cluster string, key client.ObjectKey, k string) func() string {
	t.Helper()
	return watchMember(t, env, cluster, func(member *kubernetes.Clientset) (watch.Interface, error) {
		return member.CoreV1().ConfigMaps(key.Namespace).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + key.Name})
	}, func(obj runtime.Object) (string, bool) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return "", false
		}
		return cm.Data[k], true
	})
}

// watchNamespaceLabel is watchData for a member namespace's label.
func watchNamespaceLabel(t *testing.T, env controllertest.Fleet, cluster, name, label string) func() string {
	t.Helper()
	return watchMember(t, env, cluster, func(member *kubernetes.Clientset) (watch.Interface, error) {
		return member.CoreV1().Namespaces().Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	}, func(obj runtime.Object) (string, bool) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return "", false
		}
		return ns.Labels[label], true
	})
}

// watchMember opens a watch of cluster's apiserver and, until the returned
// function is called, records value of every object it sends; that
// function stops the watch and returns the values in order.
func watchMember(t *testing.T, env controllertest.Fleet, cluster string, open func(*kubernetes.Clientset) (watch.Interface, error), value func(runtime.Object) (string, bool)) func() string {
	t.Helper()
	var member *kubernetes.Clientset
	for _, c := range env.Clusters {
		if c.Name == cluster {
			member = kubernetes.NewForConfigOrDie(c.RESTConfig())
		}
	}
	w, err := open(member)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var values []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if v, ok := value(ev.Object); ok && ev.Type != watch.Error {
				values = append(values, v)
			}
		}
	}()
	return func() string {
		w.Stop()
		<-done
		return strings.Join(values, ", ")
	}
}
