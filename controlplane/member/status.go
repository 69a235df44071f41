package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// Reasons of the conditions CollectStatus sets, Karmada's own.
const (
	// ReasonClusterReady: the member answered its health check.
	ReasonClusterReady = "ClusterReady"
	// ReasonClusterNotReady: the member answered that it is not healthy.
	ReasonClusterNotReady = "ClusterNotReady"
	// ReasonClusterNotReachable: the member did not answer, or refused
	// flotilla's credentials.
	ReasonClusterNotReachable = "ClusterNotReachable"

	// ReasonAPIEnablementsComplete: discovery of every API group succeeded.
	ReasonAPIEnablementsComplete = "Complete"
	// ReasonAPIEnablementsPartial: some API groups failed discovery (an
	// aggregated API whose backend is down, typically).
	ReasonAPIEnablementsPartial = "Partial"
	// ReasonAPIEnablementsEmpty: discovery returned nothing.
	ReasonAPIEnablementsEmpty = "Empty"
)

// CollectStatus observes a member: the Ready condition from Probe, the
// Kubernetes version, the API enablements with the CompleteAPIEnablements
// condition the scheduler trusts them by, and the node and resource
// summaries the scheduler's replica estimator divides. It follows Karmada's
// cluster status controller, reading nodes and pods page by page.
//
// The status is always usable: a member that fails its probe gets only a
// Ready=False condition (ClusterNotReachable, or ClusterNotReady when it
// answered unhealthy), and a fact that cannot be read is left empty. The
// error says what could not be collected, and wraps the probe's sentinel
// (ErrNotConnected…) when the probe failed. Conditions carry the current
// time as LastTransitionTime; meta.SetStatusCondition keeps an older one
// when the status has not changed.
func CollectStatus(ctx context.Context, c *Client) (api.ClusterStatus, error) {
	var status api.ClusterStatus
	now := metav1.Now()
	if err := c.Probe(ctx); err != nil {
		reason := ReasonClusterNotReachable
		if errors.Is(err, ErrNotReady) {
			reason = ReasonClusterNotReady
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: api.ClusterConditionReady, Status: metav1.ConditionFalse,
			Reason: reason, Message: err.Error(), LastTransitionTime: now,
		})
		return status, err
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: api.ClusterConditionReady, Status: metav1.ConditionTrue,
		Reason: ReasonClusterReady, Message: "cluster is healthy and ready to accept workloads", LastTransitionTime: now,
	})

	var errs []error
	v, err := c.serverVersion(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("read version: %w", err))
	}
	status.KubernetesVersion = v

	enablements, err := apiEnablements(c.Kubernetes.Discovery())
	status.APIEnablements = enablements
	meta.SetStatusCondition(&status.Conditions, enablementsCondition(len(enablements), err, now))
	if err != nil {
		errs = append(errs, fmt.Errorf("discover APIs: %w", err))
	}

	nodes, resources, err := c.summarize(ctx)
	status.NodeSummary, status.ResourceSummary = nodes, resources
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return status, c.secrets.scrub(fmt.Errorf("collect status of cluster %s: %w", c.Name, err))
	}
	return status, nil
}

// serverVersion reads /version with the caller's context, which the
// discovery client's ServerVersion does not take.
func (c *Client) serverVersion(ctx context.Context) (string, error) {
	body, err := c.Kubernetes.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("decode /version: %w", err)
	}
	return info.GitVersion, nil
}

func enablementsCondition(n int, err error, now metav1.Time) metav1.Condition {
	cond := metav1.Condition{
		Type: scheduler.ConditionCompleteAPIEnablements, Status: metav1.ConditionTrue,
		Reason: ReasonAPIEnablementsComplete, Message: "collected complete API enablements from the cluster",
		LastTransitionTime: now,
	}
	switch {
	case n == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonAPIEnablementsEmpty
		cond.Message = "collected no API enablements from the cluster"
	case err != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonAPIEnablementsPartial
		cond.Message = fmt.Sprintf("collected partial API enablements (%d group versions) from the cluster", n)
	}
	return cond
}

// apiEnablements lists, for every served group version (all versions, not
// only the preferred ones), the resources that can be listed, without
// subresources, sorted by group version and resource name. With a partial
// discovery failure it returns what it found and the error.
func apiEnablements(d discovery.DiscoveryInterface) ([]api.APIEnablement, error) {
	_, lists, err := d.ServerGroupsAndResources()
	var out []api.APIEnablement
	for _, list := range lists {
		if list == nil {
			continue
		}
		var resources []api.APIResource
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			resources = append(resources, api.APIResource{Name: r.Name, Kind: r.Kind})
		}
		if len(resources) == 0 {
			continue
		}
		slices.SortFunc(resources, func(a, b api.APIResource) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, api.APIEnablement{GroupVersion: list.GroupVersion, Resources: resources})
	}
	slices.SortFunc(out, func(a, b api.APIEnablement) int { return strings.Compare(a.GroupVersion, b.GroupVersion) })
	return out, err
}
