package webhook

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Options configures Register.
// clusterValidator checks a Cluster as the engine does, and its
// credentials as the control plane would before connecting: spec.secretRef
// must be in the control plane's namespace, and the Secret's kubeconfig, if
// the Secret exists already, must pass shared.ClusterConnection. A
// Secret created after its Cluster, or changed later, is checked by the
// cluster status controller before any connection.
type clusterValidator struct {
	opts Options
}

// clusterGK is Cluster's group kind in the groups this process serves.
func clusterGK() schema.GroupKind { return clusterv1.GroupVersion.WithKind("Cluster").GroupKind() }

func (v clusterValidator) check(ctx context.Context, c *clusterv1.Cluster) (admission.Warnings, error) {
	e := c.Engine()
	errs := api.ValidateCluster(&e)
	errs = append(errs, v.credentials(ctx, c)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(clusterGK(), c.Name, errs)
	}
	return nil, nil
}

func (v clusterValidator) credentials(ctx context.Context, c *clusterv1.Cluster) field.ErrorList {
	var errs field.ErrorList
	// The cluster proxy reads the impersonator's token with the control
	// plane's own identity, from the credentials namespace only (which
	// follows the API groups: karmada-cluster in Karmada's); one named
	// elsewhere would be stored and then never work.
	if ref := c.Spec.ImpersonatorSecretRef; ref != nil && ref.Namespace != shared.CredentialsNamespace() {
		errs = append(errs, field.Invalid(field.NewPath("spec", "impersonatorSecretRef", "namespace"), ref.Namespace,
			"must be "+shared.CredentialsNamespace()+", the control plane's credentials namespace: the cluster proxy reads the impersonator's Secret with the control plane's own identity"))
	}
	ref := c.Spec.SecretRef
	if ref == nil {
		return errs
	}
	path := field.NewPath("spec", "secretRef")
	if err := shared.CheckSecretRef(c); err != nil {
		return append(errs, field.Invalid(path.Child("namespace"), ref.Namespace,
			"must be "+shared.CredentialsNamespace()+", the control plane's credentials namespace: the control plane reads the Secret with its own identity"))
	}
	if v.opts.Secrets == nil {
		return errs
	}
	var s corev1.Secret
	err := v.opts.Secrets.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &s)
	switch {
	case apierrors.IsNotFound(err):
		return errs
	case err != nil:
		return append(errs, field.InternalError(path, errors.New("read the credentials Secret "+ref.Namespace+"/"+ref.Name+": "+err.Error())))
	}
	if _, err := shared.ClusterConnection(c, &s, v.opts.Controller.AllowKubeconfigExecAndFiles); err != nil {
		// The message names the Secret, the kubeconfig entry and the field,
		// never a credential.
		msg := strings.TrimPrefix(err.Error(), shared.ErrCredentialsRefused.Error()+": ")
		return append(errs, field.Invalid(path, ref.Namespace+"/"+ref.Name, msg))
	}
	return errs
}

// ValidateCreate implements admission.CustomValidator: it checks a created object as the engine would.
func (v clusterValidator) ValidateCreate(ctx context.Context, c *clusterv1.Cluster) (admission.Warnings, error) {
	return v.check(ctx, c)
}

// ValidateUpdate implements admission.CustomValidator: it checks an updated object as the engine would.
func (v clusterValidator) ValidateUpdate(ctx context.Context, _, c *clusterv1.Cluster) (admission.Warnings, error) {
	return v.check(ctx, c)
}

// ValidateDelete implements admission.CustomValidator; deletions are always allowed.
func (v clusterValidator) ValidateDelete(context.Context, *clusterv1.Cluster) (admission.Warnings, error) {
	return nil, nil
}
