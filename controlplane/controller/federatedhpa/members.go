package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// podMetricsGVR is metrics.k8s.io's PodMetrics, which metrics-server (or
// any implementation of the resource metrics API) serves in a member.
var podMetricsGVR = schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}

// connector reaches a member by name (shared.Members).
type connector interface {
	Member(ctx context.Context, name string) (*member.Client, error)
}

// errNotApplied: the member has no object flotilla applied for the
// template (not yet, or a foreign one of the same name).
var errNotApplied = errors.New("no object of this fleet's template")

// errPullMember stands for the sample of a pull-mode member: the control
// plane has no route or credentials to it (its agent pulls its Works), and
// the agent reports no metrics, so its pods are not measured. They count
// as pods with missing metrics, as for a member that does not answer, and
// the status names the member with this reason.
var errPullMember = errors.New("pull-mode member: its pods are not measured (the control plane does not reach a pull member, and its agent reports no metrics)")

// skipPull is read, except for the members in pull, which are never
// contacted and answer errPullMember at once: without it a pull member's
// read would fail on its missing credentials, or wait for the request
// timeout on an endpoint the control plane cannot reach, with a reason
// that does not say why it can never be measured.
func skipPull(pull map[string]bool, read memberReader) memberReader {
	return func(ctx context.Context, cluster string) memberSample {
		if pull[cluster] {
			return memberSample{Err: errPullMember}
		}
		return read(ctx, cluster)
	}
}

// maxMemberReads bounds the members read at once by one pass: each read
// holds a goroutine and a few connections, so a 1,000-member fleet does
// not open thousands at once; 32 reads of a 100-member fleet at ~50 ms
// each still finish in ~0.2 s.
const maxMemberReads = 32

// memberReader reads one member's sample; sampleMember, or a stand-in in
// the fan-out's benchmark.
type memberReader func(ctx context.Context, cluster string) memberSample

// sampleMembers asks every member, up to maxMemberReads at once and each
// within timeout, so a member that stalls delays the pass by timeout at
// most and never stops the others from counting.
func sampleMembers(ctx context.Context, read memberReader, clusters []api.TargetCluster, timeout time.Duration) []memberSample {
	out := make([]memberSample, len(clusters))
	slots := make(chan struct{}, maxMemberReads)
	var wg sync.WaitGroup
	for i, tc := range clusters {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			out[i] = read(ctx, tc.Name)
			out[i].Cluster, out[i].Scheduled, out[i].Took = tc.Name, tc.Replicas, time.Since(start)
		})
	}
	wg.Wait()
	return out
}

// sampleMember reads the target's pods and each metric of specs in one
// member. The pods are those of the member object flotilla applied for
// the template (its labels and template annotation say so): the object's
// namespace and the object's own selector, never the template's and
// never another namespace's, so a tenant's pods that copy the labels
// elsewhere count for nothing. A metric whose API is not served or
// failed has its Err set, and counts as missing.
func sampleMember(ctx context.Context, conn connector, fleet string, res api.ObjectReference, specs []autoscalingv2.MetricSpec, cluster string) memberSample {
	c, err := conn.Member(ctx, cluster)
	if err != nil {
		return memberSample{Err: err}
	}
	live, err := liveObject(ctx, c, res)
	if err != nil {
		return memberSample{Err: err}
	}
	if !execution.Owns(live, fleet, api.TemplateRefOfResource(res)) {
		return memberSample{Err: fmt.Errorf("%s %s/%s: %w", res.Kind, res.Namespace, res.Name, errNotApplied)}
	}
	sel, err := selectorOf(live)
	if err != nil {
		return memberSample{Err: fmt.Errorf("%s %s/%s: %w", res.Kind, res.Namespace, res.Name, err)}
	}
	ns := live.GetNamespace()
	pods, err := c.Kubernetes.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return memberSample{Err: fmt.Errorf("list pods of %s %s/%s: %w", res.Kind, res.Namespace, res.Name, err)}
	}
	out := memberSample{Pods: pods.Items, Metrics: make([]memberMetric, len(specs))}
	if out.Pods == nil {
		out.Pods = []corev1.Pod{}
	}
	r := &metricReads{ctx: ctx, c: c, ns: ns, pods: sel, listed: pods.Items}
	for i, spec := range specs {
		out.Metrics[i] = r.read(spec)
	}
	return out
}

// liveObject is the template's object in the member.
func liveObject(ctx context.Context, c *member.Client, res api.ObjectReference) (*unstructured.Unstructured, error) {
	gvk := schema.FromAPIVersionAndKind(res.APIVersion, res.Kind)
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	live, err := c.Dynamic.Resource(m.Resource).Namespace(res.Namespace).Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %s/%s: %w", res.Kind, res.Namespace, res.Name, errNotApplied)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s/%s: %w", res.Kind, res.Namespace, res.Name, err)
	}
	return live, nil
}

// selectorOf is a workload's spec.selector: a LabelSelector (Deployment,
// StatefulSet, ReplicaSet) or a plain label map (ReplicationController).
// An empty or missing selector is refused: it would select every pod of
// the namespace.
func selectorOf(obj *unstructured.Unstructured) (labels.Selector, error) {
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found || len(raw) == 0 {
		return nil, errors.New("spec.selector is missing or empty, so its pods cannot be told from the namespace's others")
	}
	_, hasLabels := raw["matchLabels"]
	_, hasExprs := raw["matchExpressions"]
	if !hasLabels && !hasExprs {
		plain := map[string]string{}
		for k, v := range raw {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("spec.selector.%s: not a string", k)
			}
			plain[k] = str
		}
		if _, err := labels.ValidatedSelectorFromSet(plain); err != nil {
			return nil, fmt.Errorf("spec.selector: %w", err)
		}
		return labels.SelectorFromValidatedSet(plain), nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, fmt.Errorf("spec.selector: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("spec.selector: %w", err)
	}
	if sel.Empty() {
		return nil, errors.New("spec.selector is empty, so its pods cannot be told from the namespace's others")
	}
	return sel, nil
}

// usageKey names one series of pod usage: a resource summed over a pod's
// containers (Container empty, for Resource metrics) or one container's
// (for ContainerResource metrics).
type usageKey struct {
	Resource  corev1.ResourceName
	Container string
}

// usageOf reads each listed pod's usage per resource, in milli-units,
// summed over its containers and per container; samples of pods not
// listed are dropped.
func usageOf(list *unstructured.UnstructuredList, pods []corev1.Pod) (map[usageKey]map[string]autoscale.PodMetric, error) {
	listed := make(map[string]bool, len(pods))
	for i := range pods {
		listed[pods[i].Name] = true
	}
	out := map[usageKey]map[string]autoscale.PodMetric{}
	add := func(k usageKey, pod string, m autoscale.PodMetric) {
		if out[k] == nil {
			out[k] = map[string]autoscale.PodMetric{}
		}
		out[k][pod] = m
	}
	for i := range list.Items {
		var pm metricsv1beta1.PodMetrics
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &pm); err != nil {
			return nil, fmt.Errorf("decode pod metrics %s: %w", list.Items[i].GetName(), err)
		}
		if !listed[pm.Name] {
			continue
		}
		sample := autoscale.PodMetric{Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration}
		sums := map[corev1.ResourceName]int64{}
		for _, ctr := range pm.Containers {
			for res, q := range ctr.Usage {
				sums[res] += q.MilliValue()
				sample.Value = q.MilliValue()
				add(usageKey{Resource: res, Container: ctr.Name}, pm.Name, sample)
			}
		}
		for res, v := range sums {
			sample.Value = v
			add(usageKey{Resource: res}, pm.Name, sample)
		}
	}
	return out, nil
}
