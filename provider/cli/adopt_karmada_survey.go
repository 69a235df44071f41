package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// karmadaLeases are the leader election Leases Karmada's controller-manager
// and scheduler hold in karmada-system while they run.
var karmadaLeases = []string{"karmada-controller-manager", "karmada-scheduler"}

// karmadaSystemNamespace is Karmada's own namespace on its apiserver.
const karmadaSystemNamespace = "karmada-system"

// finding is one line of the survey: an object that will be taken over,
// or one that will not, and why.
type finding struct {
	object, cluster, reason string
	adopt                   bool
}

// karmadaSurvey is what adopt-karmada found on the host and the members.
type karmadaSurvey struct {
	host client.Client
	// blockers stop the adoption altogether (a Karmada controller runs).
	blockers []string
	findings []finding
	// crds are Karmada-installed CRDs the control plane would refuse.
	crds []string
	// namespaces are Karmada's execution namespaces (karmada-es-<cluster>)
	// of adoptable Clusters, by cluster, which the control plane refuses
	// until they carry shared.LabelExecutionSpace.
	namespaces map[string]string
	// warnings are bindings flotilla would place differently from
	// Karmada; their member objects are not taken over.
	warnings []string
	// adoptions is the record the real run writes.
	adoptions []shared.KarmadaAdoptionEntry
	// fleet are the host's Clusters in the engine's form, as the
	// control plane's scheduler sees them at start.
	fleet []api.Cluster
}

// member is a read-only view of one member cluster, or why there is none.
type memberView struct {
	dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	err     error
}

// surveyKarmada looks at the host and, with reads only, at the members.
func surveyKarmada(ctx context.Context, cfg *rest.Config, now time.Time) (*karmadaSurvey, error) {
	scheme, err := shared.NewScheme()
	if err != nil {
		return nil, err
	}
	host, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connect to host: %w", err)
	}
	s := &karmadaSurvey{host: host}
	if err := s.leases(ctx, now); err != nil {
		return nil, err
	}
	if err := s.definitions(ctx); err != nil {
		return nil, err
	}
	members, err := s.clusters(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.bindings(ctx, members); err != nil {
		return nil, err
	}
	return s, nil
}

// leases blocks the adoption while Karmada's controller-manager or
// scheduler holds a live leader Lease: two control planes writing the same
// members would undo each other.
func (s *karmadaSurvey) leases(ctx context.Context, now time.Time) error {
	for _, name := range karmadaLeases {
		var l coordinationv1.Lease
		err := s.host.Get(ctx, client.ObjectKey{Namespace: karmadaSystemNamespace, Name: name}, &l)
		switch {
		case shared.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("read lease %s/%s: %w", karmadaSystemNamespace, name, err)
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		if holder == "" || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
			continue
		}
		if expires := l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second); expires.After(now) {
			s.blockers = append(s.blockers, fmt.Sprintf("Lease %s/%s: Karmada's %s still runs (held by %q, renewed %s); scale it to 0 and wait until the lease expires",
				karmadaSystemNamespace, name, name, holder, l.Spec.RenewTime.UTC().Format(time.RFC3339)))
		}
	}
	return nil
}

// definitions lists the CRDs the control plane installs that exist on the
// host without its label: Karmada's, which it would refuse to start over.
func (s *karmadaSurvey) definitions(ctx context.Context) error {
	defs, err := crd.Definitions()
	if err != nil {
		return err
	}
	for _, d := range defs {
		var live apiextensionsv1.CustomResourceDefinition
		err := s.host.Get(ctx, client.ObjectKey{Name: d.GetName()}, &live)
		switch {
		case shared.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("read crd %s: %w", d.GetName(), err)
		}
		if live.Labels[crd.LabelInstalledBy] != crd.InstalledByFlotilla {
			s.crds = append(s.crds, live.Name)
		}
	}
	return nil
}

// errPullMode is why the objects of a pull-mode Cluster are not taken over.
var errPullMode = errors.New("pull mode: Karmada's karmada-agent in the member keeps its objects")

// pullModeReason is the survey's line for a pull-mode Cluster. Its objects
// are not surveyed: the host holds no credentials to read the member, and
// only flotilla's agent in the member could take them over, which reads no
// adoption record (a push-mode record is the operator's grant for the
// control plane's own credentials).
const pullModeReason = "pull mode (spec.syncMode Pull): Karmada's karmada-agent in the member applies its Works and keeps its objects, and the host holds no credentials to read them, so none is taken over; " +
	"stop karmada-agent in the member and run flotilla's agent there (terraform-provider-flotilla agent --api-groups=karmada, see Pull-mode members): " +
	"it reports each existing object as a conflict unless the policy's conflictResolution is Overwrite, which rewrites each object once"

// clusters connects, read-only, to every push-mode Cluster whose
// credentials the control plane can use.
func (s *karmadaSurvey) clusters(ctx context.Context) (map[string]memberView, error) {
	var list clusterv1.ClusterList
	if err := s.host.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	out := map[string]memberView{}
	for i := range list.Items {
		cl := &list.Items[i]
		s.fleet = append(s.fleet, cl.Engine())
		if cl.Spec.SyncMode == api.Pull {
			out[cl.Name] = memberView{err: errPullMode}
			s.findings = append(s.findings, finding{object: "Cluster " + cl.Name, reason: pullModeReason})
			continue
		}
		v := memberView{}
		v.dynamic, v.mapper, v.err = connectMember(ctx, s.host, cl)
		out[cl.Name] = v
		if v.err != nil {
			s.findings = append(s.findings, finding{object: "Cluster " + cl.Name, reason: "cannot be adopted: " + v.err.Error()})
			continue
		}
		s.findings = append(s.findings, finding{object: "Cluster " + cl.Name, adopt: true, reason: "credentials readable, member reachable"})
		var ns corev1.Namespace
		err := s.host.Get(ctx, client.ObjectKey{Name: shared.ExecutionNamespace(cl.Name)}, &ns)
		switch {
		case shared.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("read namespace %s: %w", shared.ExecutionNamespace(cl.Name), err)
		case ns.Labels[shared.LabelExecutionSpace] != cl.Name:
			if s.namespaces == nil {
				s.namespaces = map[string]string{}
			}
			s.namespaces[cl.Name] = ns.Name
		}
	}
	return out, nil
}

// connectMember builds a read-only view of a member from its Cluster and
// credentials Secret, as the control plane would connect.
func connectMember(ctx context.Context, host client.Reader, cl *clusterv1.Cluster) (dynamic.Interface, *restmapper.DeferredDiscoveryRESTMapper, error) {
	ref := cl.Spec.SecretRef
	if ref == nil {
		return nil, nil, fmt.Errorf("spec.secretRef is not set (pull-mode and credential-less Clusters are not taken over)")
	}
	if err := shared.CheckSecretRef(cl); err != nil {
		return nil, nil, err
	}
	var secret corev1.Secret
	if err := host.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &secret); err != nil {
		return nil, nil, fmt.Errorf("read credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	conn, err := shared.ClusterConnection(cl, &secret, false)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := conn.RESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return nil, nil, fmt.Errorf("unreachable: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	return dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), nil
}

// bindings checks every binding Karmada made (it carries Karmada's
// permanent-id label), ResourceBindings and ClusterResourceBindings alike,
// and the Work and member object of each scheduled cluster.
func (s *karmadaSurvey) bindings(ctx context.Context, members map[string]memberView) error {
	var list workv1.ResourceBindingList
	if err := s.host.List(ctx, &list); err != nil {
		return fmt.Errorf("list resourcebindings: %w", err)
	}
	var clusterList workv1.ClusterResourceBindingList
	if err := s.host.List(ctx, &clusterList); err != nil {
		return fmt.Errorf("list clusterresourcebindings: %w", err)
	}
	var karmadas []*workv1.ResourceBinding
	for i := range list.Items {
		if rb := &list.Items[i]; karmadaBinding(rb) {
			karmadas = append(karmadas, rb)
		}
	}
	for i := range clusterList.Items {
		// Held as a ResourceBinding without a namespace, as the
		// controllers hold it (shared.BindingView).
		crb := &clusterList.Items[i]
		if rb := (&workv1.ResourceBinding{ObjectMeta: crb.ObjectMeta, Spec: crb.Spec, Status: crb.Status}); karmadaBinding(rb) {
			karmadas = append(karmadas, rb)
		}
	}
	diffs, err := s.placementDiffs(ctx, s.fleet, karmadas)
	if err != nil {
		return err
	}
	for _, rb := range karmadas {
		if err := s.binding(ctx, members, rb, diffs[hoststore.BindingRef(rb)]); err != nil {
			return err
		}
	}
	sort.Slice(s.adoptions, func(i, j int) bool { return s.adoptions[i].Template < s.adoptions[j].Template })
	return nil
}

// karmadaBinding reports whether Karmada made rb: it carries Karmada's
// permanent-id label of its kind of binding.
func karmadaBinding(rb *workv1.ResourceBinding) bool {
	adoption := execution.KarmadaAdoption{ClusterBinding: rb.Namespace == ""}
	return rb.Labels[adoption.BindingLabel()] != ""
}

// placementReason is the survey's line for each cluster of a binding
// flotilla would place differently from Karmada.
const placementReason = "flotilla would place the binding differently from Karmada (see its WARN line), so the member object is not taken over: " +
	"it stays Karmada's and the control plane leaves it alone as a conflict; make the policy give Karmada's placement (clusterNames, staticWeightList) and run the dry run again, " +
	"or accept the rollout with the policy's conflictResolution Overwrite"

// binding checks one binding Karmada made; rb without a namespace is a
// ClusterResourceBinding, whose permanent ID Karmada keeps under its own
// label key on the binding, its Works and the member objects. A binding
// flotilla would place differently (placementDiff says how) is not taken
// over: the control plane's first schedule would roll it out.
func (s *karmadaSurvey) binding(ctx context.Context, members map[string]memberView, rb *workv1.ResourceBinding, placementDiff string) error {
	adoption := execution.KarmadaAdoption{ClusterBinding: rb.Namespace == ""}
	label := adoption.BindingLabel()
	id := rb.Labels[label]
	adoption.BindingPermanentID = id
	ref := api.TemplateRefOfResource(rb.Spec.Resource)
	name := hoststore.BindingRef(rb)
	if placementDiff != "" {
		s.warnings = append(s.warnings, name+": "+placementDiff)
		for _, target := range rb.Spec.Clusters {
			s.findings = append(s.findings, finding{object: name + ": " + ref.Describe(), cluster: target.Name, reason: placementReason})
		}
		return nil
	}
	works, err := s.worksOf(ctx, label, id)
	if err != nil {
		return err
	}
	entry := shared.KarmadaAdoptionEntry{Template: ref.String(), KarmadaAdoption: adoption}
	for _, target := range rb.Spec.Clusters {
		object := name + ": " + ref.Describe()
		reason, ok := checkMember(ctx, members, works, target.Name, ref, label, id)
		s.findings = append(s.findings, finding{object: object, cluster: target.Name, adopt: ok, reason: reason})
		if ok {
			entry.Clusters = append(entry.Clusters, target.Name)
		}
	}
	if len(entry.Clusters) > 0 {
		s.adoptions = append(s.adoptions, entry)
	}
	return nil
}

// worksOf returns Karmada's Works of the binding whose permanent ID id is
// under the label key label, by cluster.
func (s *karmadaSurvey) worksOf(ctx context.Context, label, id string) (map[string]*workv1.Work, error) {
	var list workv1.WorkList
	if err := s.host.List(ctx, &list, client.MatchingLabels{label: id}); err != nil {
		return nil, fmt.Errorf("list works of binding %s: %w", id, err)
	}
	out := map[string]*workv1.Work{}
	for i := range list.Items {
		if cluster, ok := shared.ClusterOfNamespace(list.Items[i].Namespace); ok {
			out[cluster] = &list.Items[i]
		}
	}
	return out, nil
}

// checkMember says whether the member object of one scheduled cluster can
// be taken over without a write: its Work exists, the object exists, was
// applied by Karmada for this binding, and holds the Work's manifest.
func checkMember(ctx context.Context, members map[string]memberView, works map[string]*workv1.Work, cluster string, ref api.TemplateRef, label, id string) (string, bool) {
	m, ok := members[cluster]
	switch {
	case !ok:
		return "no Cluster " + cluster + " on the host", false
	case m.err != nil:
		return "its Cluster cannot be adopted: " + m.err.Error(), false
	}
	w := works[cluster]
	if w == nil {
		return "no Work in " + shared.ExecutionNamespace(cluster) + " carries the binding's " + label + " " + id, false
	}
	work := "Work " + w.Namespace + "/" + w.Name
	manifests, err := shared.Manifests(w)
	if err != nil {
		return work + ": " + err.Error(), false
	}
	if len(manifests) != 1 || !api.TemplateRefOf(manifests[0]).SameTemplate(ref) {
		return work + " does not hold exactly the binding's template", false
	}
	want := manifests[0]
	mapping, err := m.mapper.RESTMapping(want.GroupVersionKind().GroupKind(), want.GroupVersionKind().Version)
	if err != nil {
		return "kind " + want.GroupVersionKind().String() + " is not served by the member: " + err.Error(), false
	}
	live, err := m.dynamic.Resource(mapping.Resource).Namespace(want.GetNamespace()).Get(ctx, want.GetName(), metav1.GetOptions{})
	switch {
	case shared.IsNotFound(err):
		return "the member object is missing (" + work + " was not applied, or the object was deleted); the control plane would create it", false
	case err != nil:
		return "read the member object: " + err.Error(), false
	}
	labels := live.GetLabels()
	if labels[api.KarmadaLabelManaged] != api.KarmadaValueManaged || labels[label] != id {
		return fmt.Sprintf("the member object was not applied by Karmada for this binding (labels %s=%q, %s=%q)",
			api.KarmadaLabelManaged, labels[api.KarmadaLabelManaged], label, labels[label]), false
	}
	if path, wv, lv := firstDifference(manifestContent(want), manifestContent(live), ""); path != "" {
		return fmt.Sprintf("the member object differs from %s at %s (Work %s, member %s); it is left alone: set the policy's conflictResolution to Overwrite to have the control plane overwrite it", work, path, wv, lv), false
	}
	return "matches " + work + "; taken over without a write", true
}

// manifestContent is what a member object must hold of its Work: labels,
// annotations and everything outside metadata and status.
func manifestContent(obj *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range obj.Object {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	meta := map[string]any{}
	if l := obj.GetLabels(); len(l) > 0 {
		meta["labels"] = toAny(l)
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		meta["annotations"] = toAny(a)
	}
	out["metadata"] = meta
	return out
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// firstDifference returns the first path at which want is not held by
// have, with both values shown: every key of a map of want must be in have
// with a value that holds it, lists must have the same length and hold
// element by element, and scalars must be equal (numbers by value). Fields
// only in have are the member's defaults and count as held.
func firstDifference(want, have any, path string) (string, string, string) {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return orRoot(path), "an object", fmt.Sprint(have)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			hv, ok := h[k]
			if !ok {
				return orRoot(path + "." + k), fmt.Sprint(w[k]), "absent"
			}
			if p, a, b := firstDifference(w[k], hv, path+"."+k); p != "" {
				return p, a, b
			}
		}
		return "", "", ""
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return orRoot(path), fmt.Sprintf("%d item(s)", len(w)), fmt.Sprintf("%v", have)
		}
		for i := range w {
			if p, a, b := firstDifference(w[i], h[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, a, b
			}
		}
		return "", "", ""
	}
	if a, ok := number(want); ok {
		if b, ok := number(have); ok && a == b {
			return "", "", ""
		}
	} else if fmt.Sprint(want) == fmt.Sprint(have) {
		return "", "", ""
	}
	return orRoot(path), fmt.Sprint(want), fmt.Sprint(have)
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return strings.TrimPrefix(path, ".")
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n)
	case int:
		return float64(n), true
	}
	return 0, false
}
