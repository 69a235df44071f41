package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// CollectStatus observes a member within ctx (give it a deadline: the
// controllers use their probe timeout): the Ready condition from Probe, the
// Kubernetes version, the API enablements with the CompleteAPIEnablements
// condition the scheduler trusts them by, and the node and resource
// summaries the scheduler's replica estimator divides. It follows Karmada's
// cluster status controller, reading nodes and pods page by page; a client
// of a watching cache (CacheOptions.Watch) reads them from its informers
// instead, and reuses its last complete API discovery for the cache's
// DiscoveryInterval unless the member failed a probe since.
//
// The status is always usable: a member that fails its probe gets only a
// Ready=False condition (ClusterNotReachable, or ClusterNotReady when it
// answered unhealthy), and a fact that cannot be read is left empty. The
// error says what could not be collected, and wraps the probe's sentinel
// (api.ErrNotConnected…) when the probe failed. Conditions carry the current
// time as LastTransitionTime; apimeta.SetStatusCondition keeps an older one
// when the status has not changed.
//
// A member that passes its probe but does not answer discovery of its API
// groups (/api, /apis) in time, or answers it with an error, is not Ready
// either: nothing can be applied to it without a REST mapping. Only a
// partial failure (some aggregated groups) leaves it Ready, with the
// CompleteAPIEnablements condition False.
func CollectStatus(ctx context.Context, c *Client) (api.ClusterStatus, error) {
	// Every request below ends when ctx does, discovery's included; cancel
	// also releases the discovery requests' hooks on ctx.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var status api.ClusterStatus
	now := metav1.Now()
	notReady := func(err error) (api.ClusterStatus, error) {
		reason := api.ReasonClusterNotReachable
		if errors.Is(err, ErrNotReady) {
			reason = api.ReasonClusterNotReady
		}
		return api.NotReadyStatus(reason, err, now), err
	}
	if err := c.Probe(ctx); err != nil {
		c.discovered.forget()
		return notReady(err)
	}
	apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: api.ClusterConditionReady, Status: metav1.ConditionTrue,
		Reason: api.ReasonClusterReady, Message: "cluster is healthy and ready to accept workloads", LastTransitionTime: now,
	})

	var errs []error
	v, err := c.serverVersion(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("read version: %w", err))
	}
	status.KubernetesVersion = v

	tags := c.discoveryTags(ctx)
	enablements, kept := c.discovered.get(tags)
	var discoErr error
	if !kept {
		disco, err := c.boundDiscovery(ctx)
		if err != nil {
			return notReady(c.secrets.scrub(fmt.Errorf("collect status of cluster %s: %w", c.Name, err)))
		}
		enablements, discoErr = apiEnablements(disco)
		if discoErr != nil && !discovery.IsGroupDiscoveryFailedError(discoErr) {
			return notReady(c.discoveryError(ctx, discoErr))
		}
		if discoErr == nil {
			c.discovered.keep(enablements, tags)
		}
	}
	status.APIEnablements = enablements
	apimeta.SetStatusCondition(&status.Conditions, enablementsCondition(len(enablements), discoErr, now))
	if discoErr != nil {
		errs = append(errs, fmt.Errorf("discover APIs: %w", discoErr))
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

// boundDiscovery is a discovery client whose every request ends when ctx
// does. client-go's discovery takes no context (it sends context.TODO), so
// the request contexts are tied to ctx in the transport; the member's own
// request timeout still applies.
func (c *Client) boundDiscovery(ctx context.Context) (discovery.DiscoveryInterface, error) {
	hc := &http.Client{Transport: boundTransport{ctx: ctx, base: c.http.Transport}, Timeout: c.http.Timeout}
	d, err := discovery.NewDiscoveryClientForConfigAndClient(c.config, hc)
	if err != nil {
		return nil, fmt.Errorf("build discovery client: %w", err)
	}
	return d, nil
}

// boundTransport ends each request when ctx ends, as well as when the
// request's own context does.
type boundTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

// RoundTrip sends req under a context cancelled with ctx. The hook stays
// registered until ctx ends, which CollectStatus makes sure of on return,
// so a request's body can still be read after RoundTrip returns.
func (t boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rctx, cancel := context.WithCancelCause(req.Context())
	context.AfterFunc(t.ctx, func() { cancel(context.Cause(t.ctx)) })
	return t.base.RoundTrip(req.WithContext(rctx))
}

// discoveryError is the error of a member whose API discovery failed
// whole: api.ErrNotConnected when no answer came in time, ErrNotReady when it
// answered with an error.
func (c *Client) discoveryError(ctx context.Context, err error) error {
	kind := ErrNotReady
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		kind = api.ErrNotConnected
	}
	cause := transportCause(err)
	if ctx.Err() != nil {
		cause = fmt.Errorf("API discovery got no answer in time: %w", context.Cause(ctx))
	} else {
		cause = fmt.Errorf("API discovery failed: %w", cause)
	}
	return c.probeError(kind, cause)
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
		Type: api.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue,
		Reason: api.ReasonAPIEnablementsComplete, Message: "collected complete API enablements from the cluster",
		LastTransitionTime: now,
	}
	switch {
	case n == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, api.ReasonAPIEnablementsEmpty
		cond.Message = "collected no API enablements from the cluster"
	case err != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, api.ReasonAPIEnablementsPartial
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
