package crossplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// CredentialsNamespace is the host namespace of the member credentials
// Secrets the Cluster managed resources write: the one namespace whose
// Secrets the host's control plane reads, which follows the API groups
// (--api-groups, apis.Use): flotilla-system, or karmada-cluster in
// Karmada's.
func CredentialsNamespace() string { return apis.Current().CredentialsNamespace() }

const kindCluster = "Cluster"

// errClusterNotAdopted refuses a host Cluster, or its credentials Secret,
// that no managed resource owns. Host Clusters are cluster-scoped and
// their Secrets live in the control plane's namespace: adopting one from a
// namespaced managed resource would let whoever may write Clusters in one
// namespace rewrite an administrator's member (endpoint and credentials).
var errClusterNotAdopted = errors.New("a Cluster managed resource never adopts host objects it did not create; give it another external name (crossplane.io/external-name), or have the fleet administrator delete the host object first")

// clusterClient is the external client of Cluster managed resources: a
// host cluster.flotilla.io Cluster and its credentials Secret.
type clusterClient struct {
	kube client.Client // the management cluster, where the MR's Secret is
	host *host
}

func (c *clusterClient) what(mg *v1alpha1.Cluster) string {
	return "Cluster " + externalName(mg)
}

// Observe reads the host Cluster and its credentials.
func (c *clusterClient) Observe(ctx context.Context, mg *v1alpha1.Cluster) (managed.ExternalObservation, error) {
	var live clusterv1.Cluster
	if err := c.host.client.Get(ctx, client.ObjectKey{Name: externalName(mg)}, &live); err != nil {
		if apierrors.IsNotFound(err) {
			return managed.ExternalObservation{}, nil
		}
		return managed.ExternalObservation{}, fmt.Errorf("read %s in the host: %w", c.what(mg), err)
	}
	if done, err := ownedOrGone(&live, c.what(mg), kindCluster, mg, errClusterNotAdopted); done || err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = clusterObservation(live)
	mg.SetConditions(clusterReadiness(live.Status))

	desired, err := c.desired(mg, live.Spec.Taints)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	want := clusterSpec(mg, live.Spec.Taints)
	// spec.id is the member's own, which a Pull cluster's agent records.
	want.ID = live.Spec.ID
	upToDate := live.Annotations[AnnotationDesiredHash] == desired.GetAnnotations()[AnnotationDesiredHash] &&
		equality.Semantic.DeepEqual(want, live.Spec)
	if upToDate && mg.Spec.ForProvider.CredentialsSecretRef != nil {
		if upToDate, err = c.credentialsUpToDate(ctx, mg); err != nil {
			return managed.ExternalObservation{}, err
		}
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// Create writes the credentials Secret and the host Cluster.
func (c *clusterClient) Create(ctx context.Context, mg *v1alpha1.Cluster) (managed.ExternalCreation, error) {
	mg.SetConditions(xpv2.Creating())
	return managed.ExternalCreation{}, c.apply(ctx, mg)
}

// Update writes the credentials Secret and the host Cluster, keeping the
// taints the control plane's cluster status controller manages.
func (c *clusterClient) Update(ctx context.Context, mg *v1alpha1.Cluster) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, c.apply(ctx, mg)
}

// apply writes the credentials Secret and the host Cluster. Both must be
// absent or this managed resource's: it reads them right before writing,
// as Observe's check may be a poll old, and writes the Cluster at the
// resourceVersion it checked.
func (c *clusterClient) apply(ctx context.Context, mg *v1alpha1.Cluster) error {
	if mg.Spec.ForProvider.SyncMode == api.Pull && mg.Spec.ForProvider.CredentialsSecretRef != nil {
		return fmt.Errorf("%s: spec.forProvider.credentialsSecretRef must not be set with syncMode Pull: the control plane gets no credentials for a Pull member, whose agent (terraform-provider-flotilla agent) reaches the hub instead", c.what(mg))
	}
	var live *clusterv1.Cluster
	var cl clusterv1.Cluster
	switch err := c.host.client.Get(ctx, client.ObjectKey{Name: externalName(mg)}, &cl); {
	case err == nil:
		if err := checkOwner(&cl, c.what(mg), kindCluster, mg, errClusterNotAdopted); err != nil {
			return err
		}
		live = &cl
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read %s in the host: %w", c.what(mg), err)
	}
	if ref := mg.Spec.ForProvider.CredentialsSecretRef; ref != nil {
		kubeconfig, err := c.credentials(ctx, mg)
		if err != nil {
			return err
		}
		if err := c.applySecret(ctx, mg, kubeconfig); err != nil {
			return err
		}
	}
	var taints []corev1.Taint
	if live != nil {
		taints = live.Spec.Taints
	}
	desired, err := c.desired(mg, taints)
	if err != nil {
		return err
	}
	if live != nil {
		// The control plane writes taints too: fail on a concurrent change
		// rather than drop a taint it just added.
		desired.SetResourceVersion(live.ResourceVersion)
	}
	if err := apply(ctx, c.host.client, desired); err != nil {
		return fmt.Errorf("apply %s to the host: %w", c.what(mg), err)
	}
	return nil
}

// Delete removes the host Cluster and its credentials Secret, each only if
// this managed resource owns it.
func (c *clusterClient) Delete(ctx context.Context, mg *v1alpha1.Cluster) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	name := externalName(mg)
	if err := deleteOwned(ctx, c.host.client, client.ObjectKey{Name: name}, &clusterv1.Cluster{}, c.what(mg), kindCluster, mg); err != nil {
		return managed.ExternalDelete{}, err
	}
	key := client.ObjectKey{Namespace: CredentialsNamespace(), Name: name}
	return managed.ExternalDelete{}, deleteOwned(ctx, c.host.client, key, &corev1.Secret{}, "credentials secret "+key.String()+" of "+c.what(mg), kindCluster, mg)
}

// Disconnect is a no-op: host clients are cached and shared.
func (c *clusterClient) Disconnect(context.Context) error { return nil }

// desired is the host Cluster as the provider applies it. Its hash covers
// the managed resource's own fields only, so a taint the control plane adds
// does not make it out of date.
func (c *clusterClient) desired(mg *v1alpha1.Cluster, liveTaints []corev1.Taint) (*unstructured.Unstructured, error) {
	own, err := toUnstructured(clusterSpec(mg, nil))
	if err != nil {
		return nil, fmt.Errorf("encode spec of %s: %w", c.what(mg), err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": own}}
	u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kindCluster))
	u.SetName(externalName(mg))
	u.SetLabels(mg.Spec.ForProvider.Labels)
	if err := stamp(u, kindCluster, mg); err != nil {
		return nil, err
	}
	merged, err := toUnstructured(clusterSpec(mg, liveTaints))
	if err != nil {
		return nil, fmt.Errorf("encode spec of %s: %w", c.what(mg), err)
	}
	u.Object["spec"] = merged
	return u, nil
}

// clusterSpec is the host Cluster's spec for the managed resource: its facts,
// the credentials Secret, and the control plane's taints found in liveTaints.
func clusterSpec(mg *v1alpha1.Cluster, liveTaints []corev1.Taint) api.ClusterSpec {
	p := mg.Spec.ForProvider
	mode := p.SyncMode
	if mode == "" {
		mode = api.Push
	}
	spec := api.ClusterSpec{
		SyncMode:                    mode,
		APIEndpoint:                 p.APIEndpoint,
		InsecureSkipTLSVerification: p.InsecureSkipTLSVerification,
		ProxyURL:                    p.ProxyURL,
		Provider:                    p.Provider,
		Region:                      p.Region,
		Zone:                        p.Zone,
		Zones:                       p.Zones,
		Taints:                      slices.Clone(p.Taints),
		ResourceModels:              p.ResourceModels,
	}
	if p.CredentialsSecretRef != nil {
		spec.SecretRef = &api.LocalSecretReference{Namespace: CredentialsNamespace(), Name: externalName(mg)}
	}
	for _, t := range liveTaints {
		if api.IsClusterStatusTaint(t.Key) && !slices.ContainsFunc(spec.Taints, func(o corev1.Taint) bool { return o.Key == t.Key && o.Effect == t.Effect }) {
			spec.Taints = append(spec.Taints, t)
		}
	}
	if len(spec.Taints) == 0 {
		spec.Taints = nil
	}
	return spec
}

// clusterObservation is status.atProvider of the host Cluster.
func clusterObservation(live clusterv1.Cluster) v1alpha1.ClusterObservation {
	obs := v1alpha1.ClusterObservation{KubernetesVersion: live.Status.KubernetesVersion, Taints: live.Spec.Taints}
	if cond := apimeta.FindStatusCondition(live.Status.Conditions, api.ClusterConditionReady); cond != nil {
		obs.Ready, obs.Message = string(cond.Status), cond.Message
	}
	return obs
}

// clusterReadiness is the managed resource's Ready condition: Available when
// the control plane reports the member Ready.
func clusterReadiness(st api.ClusterStatus) xpv2.Condition {
	cond := apimeta.FindStatusCondition(st.Conditions, api.ClusterConditionReady)
	switch {
	case cond == nil:
		return xpv2.Creating().WithMessage("waiting for the control plane to probe the member")
	case cond.Status == metav1.ConditionTrue:
		return xpv2.Available()
	default:
		return xpv2.Unavailable().WithMessage(fmt.Sprintf("member not ready: %s: %s", cond.Reason, cond.Message))
	}
}

// credentials reads the member's kubeconfig from the managed resource's Secret.
func (c *clusterClient) credentials(ctx context.Context, mg *v1alpha1.Cluster) ([]byte, error) {
	ref := mg.Spec.ForProvider.CredentialsSecretRef
	key := ref.Key
	if key == "" {
		key = v1alpha1.DefaultCredentialsKey
	}
	var s corev1.Secret
	if err := c.kube.Get(ctx, client.ObjectKey{Namespace: mg.Namespace, Name: ref.Name}, &s); err != nil {
		return nil, fmt.Errorf("read spec.forProvider.credentialsSecretRef %s/%s: %w", mg.Namespace, ref.Name, err)
	}
	kubeconfig := s.Data[key]
	if len(kubeconfig) == 0 {
		return nil, fmt.Errorf("spec.forProvider.credentialsSecretRef: secret %s/%s has no key %q", mg.Namespace, ref.Name, key)
	}
	if err := checkMemberKubeconfig(kubeconfig); err != nil {
		return nil, fmt.Errorf("spec.forProvider.credentialsSecretRef: secret %s/%s key %q: %w", mg.Namespace, ref.Name, key, err)
	}
	return kubeconfig, nil
}

// credentialsUpToDate compares the host Secret with the managed resource's.
func (c *clusterClient) credentialsUpToDate(ctx context.Context, mg *v1alpha1.Cluster) (bool, error) {
	want, err := c.credentials(ctx, mg)
	if err != nil {
		return false, err
	}
	var s corev1.Secret
	key := client.ObjectKey{Namespace: CredentialsNamespace(), Name: externalName(mg)}
	if err := c.host.client.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("read credentials secret %s of %s in the host: %w", key, c.what(mg), err)
	}
	return bytes.Equal(s.Data[clusterv1.SecretKeyKubeconfig], want) && ownershipOf(&s, kindCluster, mg) == ownedBySelf, nil
}

// applySecret writes the host credentials Secret, creating its namespace
// when needed and refusing a Secret this managed resource does not own.
func (c *clusterClient) applySecret(ctx context.Context, mg *v1alpha1.Cluster, kubeconfig []byte) error {
	key := client.ObjectKey{Namespace: CredentialsNamespace(), Name: externalName(mg)}
	var live corev1.Secret
	err := c.host.client.Get(ctx, key, &live)
	switch {
	case err == nil:
		if err := checkOwner(&live, "credentials secret "+key.String(), kindCluster, mg, errClusterNotAdopted); err != nil {
			return err
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read credentials secret %s of %s in the host: %w", key, c.what(mg), err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(CredentialsNamespace())
	if err := c.host.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s in the host: %w", CredentialsNamespace(), err)
	}
	s := &unstructured.Unstructured{Object: map[string]any{
		"type": string(corev1.SecretTypeOpaque),
		// Built by hand, so that no encoding error can carry the value.
		"data": map[string]any{clusterv1.SecretKeyKubeconfig: encodeBase64(kubeconfig)},
	}}
	s.SetAPIVersion("v1")
	s.SetKind("Secret")
	s.SetNamespace(key.Namespace)
	s.SetName(key.Name)
	s.SetAnnotations(map[string]string{AnnotationOwner: ownerOf(kindCluster, mg), AnnotationOwnerUID: string(mg.GetUID())})
	if err := apply(ctx, c.host.client, s); err != nil {
		return fmt.Errorf("apply credentials secret %s of %s to the host: %w", key, c.what(mg), err)
	}
	return nil
}
