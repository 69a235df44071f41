package federatedhpa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	externalmetricsv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
	custommetrics "k8s.io/metrics/pkg/client/custom_metrics"
	custommetricsscheme "k8s.io/metrics/pkg/client/custom_metrics/scheme"
	externalmetrics "k8s.io/metrics/pkg/client/external_metrics"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// The metrics APIs a member may serve (each through an APIService of its
// aggregation layer).
const (
	customMetricsGroup   = "custom.metrics.k8s.io"
	externalMetricsGroup = "external.metrics.k8s.io"
)

// defaultCustomMetricWindow is the window of a custom metric sample that
// states none (Kubernetes' metrics client assumes one minute).
const defaultCustomMetricWindow = time.Minute

// errNotServed: the member's aggregation layer has no such API group.
var errNotServed = errors.New("not served")

// metricReads is one member's reads of one pass: the pod metrics of
// metrics.k8s.io are listed once for every Resource and ContainerResource
// metric, and each
// metrics API is looked up once.
type metricReads struct {
	ctx    context.Context
	c      *member.Client
	ns     string
	pods   labels.Selector
	listed []corev1.Pod

	usage    map[usageKey]map[string]autoscale.PodMetric
	usageErr error
	read1    bool

	custom    custommetrics.CustomMetricsClient
	customErr error
	external  externalmetrics.ExternalMetricsClient
	extErr    error
}

// read is the member's reading of one metric.
func (r *metricReads) read(spec autoscalingv2.MetricSpec) memberMetric {
	switch {
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		return r.podUsage(usageKey{Resource: spec.Resource.Name})
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		return r.podUsage(usageKey{Resource: spec.ContainerResource.Name, Container: spec.ContainerResource.Container})
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		return r.podsMetric(spec.Pods.Metric)
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		return r.objectMetric(spec.Object)
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		return r.externalMetric(spec.External.Metric)
	}
	// Refused by computeMetric, by name; nothing to read.
	return memberMetric{}
}

// podUsage is the member's per-pod usage series k, from its PodMetrics
// listed once per pass.
func (r *metricReads) podUsage(k usageKey) memberMetric {
	if !r.read1 {
		r.read1 = true
		r.usage, r.usageErr = r.resourceUsage()
	}
	if r.usageErr != nil {
		return memberMetric{Err: r.usageErr}
	}
	return memberMetric{PerPod: r.usage[k]}
}

// resourceUsage lists the member's PodMetrics of the target's pods.
func (r *metricReads) resourceUsage() (map[usageKey]map[string]autoscale.PodMetric, error) {
	list, err := r.c.Dynamic.Resource(podMetricsGVR).Namespace(r.ns).List(r.ctx, metav1.ListOptions{LabelSelector: r.pods.String()})
	if err != nil {
		return nil, fmt.Errorf("read pod metrics (metrics.k8s.io) in namespace %s: %w", r.ns, err)
	}
	return usageOf(list, r.listed)
}

// restClient is a client of one metrics API version over the member's
// shared HTTP transport, its requests bounded by what is left of the
// pass's time for this member: the metrics clients of k8s.io/metrics take
// no context, so the HTTP client's timeout bounds them instead.
func (r *metricReads) restClient(gv schema.GroupVersion, codecs runtime.NegotiatedSerializer) (rest.Interface, error) {
	hc := r.c.HTTPClient()
	if dl, ok := r.ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return nil, r.ctx.Err()
		}
		hc = &http.Client{Transport: hc.Transport, Timeout: left}
	}
	cfg := r.c.RESTConfig()
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &gv
	cfg.NegotiatedSerializer = codecs
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientForConfigAndClient(cfg, hc)
}

// servedVersions is the versions the member serves of an API group, or
// errNotServed.
func (r *metricReads) servedVersions(group string) ([]string, error) {
	raw, err := r.c.Kubernetes.Discovery().RESTClient().Get().AbsPath("/apis", group).Do(r.ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s is %w by the member (no APIService registers an adapter for it)", group, errNotServed)
	}
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", group, err)
	}
	var g metav1.APIGroup
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("decode the API group %s: %w", group, err)
	}
	out := make([]string, 0, len(g.Versions))
	for _, v := range g.Versions {
		out = append(out, v.Version)
	}
	return out, nil
}

// customClient is a custom.metrics.k8s.io client at the newest version
// the member serves that the metrics library speaks.
func (r *metricReads) customClient() (custommetrics.CustomMetricsClient, error) {
	if r.custom != nil || r.customErr != nil {
		return r.custom, r.customErr
	}
	r.custom, r.customErr = func() (custommetrics.CustomMetricsClient, error) {
		served, err := r.servedVersions(customMetricsGroup)
		if err != nil {
			return nil, err
		}
		for _, want := range custommetrics.MetricVersions {
			for _, v := range served {
				if v == want.Version {
					rc, err := r.restClient(want, custommetricsscheme.Codecs.WithoutConversion())
					if err != nil {
						return nil, err
					}
					return custommetrics.NewForVersion(rc, r.c.Mapper, want), nil
				}
			}
		}
		return nil, fmt.Errorf("%s: the member serves versions %v, none of which this client speaks", customMetricsGroup, served)
	}()
	return r.custom, r.customErr
}

// externalClient is an external.metrics.k8s.io client.
func (r *metricReads) externalClient() (externalmetrics.ExternalMetricsClient, error) {
	if r.external != nil || r.extErr != nil {
		return r.external, r.extErr
	}
	r.external, r.extErr = func() (externalmetrics.ExternalMetricsClient, error) {
		if _, err := r.servedVersions(externalMetricsGroup); err != nil {
			return nil, err
		}
		rc, err := r.restClient(externalmetricsv1beta1.SchemeGroupVersion, scheme.Codecs.WithoutConversion())
		if err != nil {
			return nil, err
		}
		return externalmetrics.New(rc), nil
	}()
	return r.external, r.extErr
}

// podsMetric reads a per-pod custom metric of the target's pods; samples
// of pods not listed are dropped.
func (r *metricReads) podsMetric(id autoscalingv2.MetricIdentifier) memberMetric {
	fail := func(err error) memberMetric {
		return memberMetric{Err: fmt.Errorf("pods metric %s: %w", id.Name, err)}
	}
	cl, err := r.customClient()
	if err != nil {
		return fail(err)
	}
	metricSel, err := metricSelector(id.Selector)
	if err != nil {
		return fail(err)
	}
	list, err := cl.NamespacedMetrics(r.ns).GetForObjects(schema.GroupKind{Kind: "Pod"}, r.pods, id.Name, metricSel)
	if err != nil {
		return fail(fmt.Errorf("read %s in namespace %s: %w", customMetricsGroup, r.ns, err))
	}
	return memberMetric{PerPod: perPod(list.Items, r.listed)}
}

// perPod is the samples of the listed pods, in milli-units.
func perPod(items []custommetricsv1beta2.MetricValue, listed []corev1.Pod) map[string]autoscale.PodMetric {
	names := make(map[string]bool, len(listed))
	for i := range listed {
		names[listed[i].Name] = true
	}
	out := map[string]autoscale.PodMetric{}
	for _, m := range items {
		if !names[m.DescribedObject.Name] {
			continue
		}
		window := defaultCustomMetricWindow
		if m.WindowSeconds != nil {
			window = time.Duration(*m.WindowSeconds) * time.Second
		}
		out[m.DescribedObject.Name] = autoscale.PodMetric{Value: m.Value.MilliValue(), Timestamp: m.Timestamp.Time, Window: window}
	}
	return out
}

// objectMetric reads the metric of the described object, in the target's
// namespace (a Namespace kind means that namespace itself, as in
// Kubernetes). A member that serves the API but has no value for the
// object (NotFound) contributes nothing, as in Karmada's adapter: the
// object need not exist in every member.
func (r *metricReads) objectMetric(src *autoscalingv2.ObjectMetricSource) memberMetric {
	ref := src.DescribedObject
	fail := func(err error) memberMetric {
		return memberMetric{Err: fmt.Errorf("%s metric %s of %s %s: %w", ref.Kind, src.Metric.Name, ref.Kind, ref.Name, err)}
	}
	cl, err := r.customClient()
	if err != nil {
		return fail(err)
	}
	metricSel, err := metricSelector(src.Metric.Selector)
	if err != nil {
		return fail(err)
	}
	gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
	var v *custommetricsv1beta2.MetricValue
	if gk.Group == "" && gk.Kind == "Namespace" {
		v, err = cl.RootScopedMetrics().GetForObject(gk, r.ns, src.Metric.Name, metricSel)
	} else {
		v, err = cl.NamespacedMetrics(r.ns).GetForObject(gk, ref.Name, src.Metric.Name, metricSel)
	}
	if apierrors.IsNotFound(err) {
		return memberMetric{}
	}
	if err != nil {
		return fail(fmt.Errorf("read %s in namespace %s: %w", customMetricsGroup, r.ns, err))
	}
	return memberMetric{Value: v.Value.MilliValue(), Found: true}
}

// externalMetric sums the member's series of an external metric that
// match its selector, in the target's namespace; none found contributes
// nothing.
func (r *metricReads) externalMetric(id autoscalingv2.MetricIdentifier) memberMetric {
	fail := func(err error) memberMetric {
		return memberMetric{Err: fmt.Errorf("external metric %s: %w", id.Name, err)}
	}
	cl, err := r.externalClient()
	if err != nil {
		return fail(err)
	}
	metricSel, err := metricSelector(id.Selector)
	if err != nil {
		return fail(err)
	}
	list, err := cl.NamespacedMetrics(r.ns).List(id.Name, metricSel)
	if apierrors.IsNotFound(err) {
		return memberMetric{}
	}
	if err != nil {
		return fail(fmt.Errorf("read %s in namespace %s: %w", externalMetricsGroup, r.ns, err))
	}
	out := memberMetric{Found: len(list.Items) > 0}
	for _, m := range list.Items {
		out.Value += m.Value.MilliValue()
	}
	return out
}

// metricSelector is a metric's label selector; none selects every series.
func metricSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("metric selector: %w", err)
	}
	return sel, nil
}
