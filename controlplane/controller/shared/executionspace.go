package shared

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// FinalizerExecution holds a binding until its Works are gone, and a Work
// until its objects are removed from (or released in) its member.
const FinalizerExecution = "flotilla.io/execution"

// Evicting reports whether the binding has a graceful eviction task for
// cluster that keeps the old copy there.
func Evicting(rb *workv1.ResourceBinding, cluster string) bool {
	return slices.ContainsFunc(rb.Spec.GracefulEvictionTasks, func(t api.GracefulEvictionTask) bool { return t.FromCluster == cluster && keepsCopy(t) })
}

// EnsureExecutionSpaces makes sure each cluster's execution namespace
// exists and is flotilla's: one flotilla creates carries the label
// cluster.flotilla.io/execution-space naming its cluster. A namespace of
// that name that someone else made is refused rather than used: its Works
// would be applied with the control plane's credentials, and whoever made
// it may hold rights in it.
func EnsureExecutionSpaces(ctx context.Context, c client.Client, clusters []api.TargetCluster) error {
	for _, tc := range clusters {
		name := ExecutionNamespace(tc.Name)
		var ns corev1.Namespace
		err := c.Get(ctx, client.ObjectKey{Name: name}, &ns)
		if IsNotFound(err) {
			ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelExecutionSpace: tc.Name}}}
			err = c.Create(ctx, &ns)
			if apierrors.IsAlreadyExists(err) {
				err = c.Get(ctx, client.ObjectKey{Name: name}, &ns)
			}
		}
		if err != nil {
			return fmt.Errorf("create execution namespace %s for cluster %s: %w", name, tc.Name, err)
		}
		if err := CheckExecutionSpace(&ns, tc.Name); err != nil {
			return err
		}
	}
	return nil
}

// CheckExecutionSpace refuses an execution namespace flotilla did not create.
func CheckExecutionSpace(ns *corev1.Namespace, cluster string) error {
	if ns.Labels[LabelExecutionSpace] != cluster {
		return &RefusedError{Object: "Namespace " + ns.Name, Reasons: field.ErrorList{field.Invalid(field.NewPath("metadata", "labels").Key(LabelExecutionSpace), ns.Labels[LabelExecutionSpace],
			fmt.Sprintf("execution namespace of cluster %s exists and was not created by flotilla; delete it (flotilla creates it again) or label it %s=%s if flotilla's it is", cluster, LabelExecutionSpace, cluster))}}
	}
	if !ns.DeletionTimestamp.IsZero() {
		return fmt.Errorf("execution namespace %s of cluster %s is being deleted", ns.Name, cluster)
	}
	return nil
}
