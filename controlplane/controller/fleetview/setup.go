package fleetview

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

// fieldManager owns the impersonation RBAC in members.
const fieldManager = "flotilla"

// Setup registers the impersonation RBAC reconciler, the search cache's
// reconciler and the cluster proxy server, whose Targets and Search it
// fills; controller.Setup calls it only when the
// proxy is configured.
func Setup(mgr ctrl.Manager, ms *shared.Members, server fleetview.Options) error {
	r := &reconciler{host: mgr.GetClient(), members: ms}
	if err := ctrl.NewControllerManagedBy(mgr).Named("cluster-proxy-rbac").
		For(&clusterv1.Cluster{}).
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(r.allClusters)).
		Watches(&rbacv1.ClusterRoleBinding{}, handler.EnqueueRequestsFromMapFunc(r.allClusters)).
		Complete(r); err != nil {
		return fmt.Errorf("set up cluster proxy RBAC controller: %w", err)
	}
	host, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("cluster proxy: host client: %w", err)
	}
	server.Targets = r.target
	// In Karmada's groups the cached objects also carry karmada-search's
	// cluster annotation.
	server.Search = fleetview.NewCache(fleetview.CacheOptions{KarmadaAnnotation: apis.Current() == apis.KarmadaGroups})
	if err := setupSearch(mgr, ms, server.Search); err != nil {
		return err
	}
	srv, err := fleetview.New(host, server)
	if err != nil {
		return err
	}
	return mgr.Add(srv)
}

type reconciler struct {
	host    client.Client
	members *shared.Members
}

// allClusters maps any change of the host's RBAC to every Cluster: which
// ClusterRole grants which Cluster's proxy is decided in Reconcile.
func (r *reconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	var list clusterv1.ClusterList
	if err := r.host.List(ctx, &list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return out
}

// Reconcile keeps, in a Push member with an impersonator, a ClusterRole
// that lets the impersonator impersonate exactly the host subjects allowed
// clusters/proxy on it, bound to the impersonator's user name (as the
// member itself reports it for the impersonator's token).
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cl clusterv1.Cluster
	if err := r.host.Get(ctx, req.NamespacedName, &cl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cl.DeletionTimestamp.IsZero() || cl.Spec.ImpersonatorSecretRef == nil || cl.Spec.SyncMode == api.Pull {
		return reconcile.Result{}, nil
	}
	subjects, err := r.subjects(ctx, cl.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	m, err := r.members.Member(ctx, cl.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	token, err := r.impersonatorToken(ctx, &cl)
	if err != nil {
		return reconcile.Result{}, err
	}
	who, err := whoAmI(ctx, m.RESTConfig(), token)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("cluster %s: identify the impersonator: %w", cl.Name, err)
	}
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorRoleName},
		Rules:      impersonationRules(subjects),
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorRoleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ImpersonatorRoleName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: who}},
	}
	// The control plane's own member credentials write this RBAC; they
	// never carry a user's request.
	for _, obj := range []client.Object{role, binding} {
		if err := applyRBAC(ctx, m.Kubernetes, obj); err != nil {
			return reconcile.Result{}, fmt.Errorf("cluster %s: %w", cl.Name, err)
		}
	}
	return reconcile.Result{}, nil
}

// subjects lists the host subjects allowed clusters/proxy on cluster.
func (r *reconciler) subjects(ctx context.Context, cluster string) ([]rbacv1.Subject, error) {
	var roles rbacv1.ClusterRoleList
	if err := r.host.List(ctx, &roles); err != nil {
		return nil, fmt.Errorf("list cluster roles: %w", err)
	}
	var bindings rbacv1.ClusterRoleBindingList
	if err := r.host.List(ctx, &bindings); err != nil {
		return nil, fmt.Errorf("list cluster role bindings: %w", err)
	}
	return proxySubjects(roles.Items, bindings.Items, cluster), nil
}

// impersonatorToken reads the token of spec.impersonatorSecretRef, which
// must be in the control plane's namespace for the same reason as
// spec.secretRef (shared.CheckSecretRef).
func (r *reconciler) impersonatorToken(ctx context.Context, cl *clusterv1.Cluster) (string, error) {
	ref := cl.Spec.ImpersonatorSecretRef
	if ref.Namespace != shared.CredentialsNamespace() {
		return "", fmt.Errorf("cluster %s: spec.impersonatorSecretRef.namespace %q: the impersonator Secret must be in the control plane's namespace %s",
			cl.Name, ref.Namespace, shared.CredentialsNamespace())
	}
	var s corev1.Secret
	if err := r.host.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &s); err != nil {
		return "", fmt.Errorf("cluster %s: read impersonator secret %s/%s: %w", cl.Name, ref.Namespace, ref.Name, err)
	}
	token := string(s.Data[clusterv1.SecretKeyToken])
	if token == "" {
		return "", fmt.Errorf("cluster %s: impersonator secret %s/%s has no %q key", cl.Name, ref.Namespace, ref.Name, clusterv1.SecretKeyToken)
	}
	return token, nil
}

// target is the proxy's view of a Cluster: refused for a Pull member (the
// control plane has no route to it) and for one without an impersonator
// (the proxy never falls back to the control plane's own credentials).
func (r *reconciler) target(ctx context.Context, name string) (fleetview.Target, error) {
	var cl clusterv1.Cluster
	if err := r.host.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
		if apierrors.IsNotFound(err) {
			return fleetview.Target{}, apierrors.NewNotFound(clusterv1.GroupVersion.WithResource("clusters").GroupResource(), name)
		}
		return fleetview.Target{}, err
	}
	if cl.Spec.SyncMode == api.Pull {
		return fleetview.Target{}, apierrors.NewBadRequest(fmt.Sprintf(
			"cluster %s is in Pull mode: the control plane has no connection to it, so the cluster proxy cannot reach it; use the member's own kubeconfig", name))
	}
	if cl.Spec.ImpersonatorSecretRef == nil {
		return fleetview.Target{}, apierrors.NewServiceUnavailable(fmt.Sprintf(
			"cluster %s has no spec.impersonatorSecretRef: the cluster proxy reaches a member only as the requesting user, through an impersonator identity", name))
	}
	token, err := r.impersonatorToken(ctx, &cl)
	if err != nil {
		return fleetview.Target{}, apierrors.NewServiceUnavailable(err.Error())
	}
	m, err := r.members.Member(ctx, name)
	if err != nil {
		return fleetview.Target{}, apierrors.NewServiceUnavailable(err.Error())
	}
	subjects, err := r.subjects(ctx, name)
	if err != nil {
		return fleetview.Target{}, err
	}
	var groups []string
	for _, s := range subjects {
		if s.Kind == rbacv1.GroupKind {
			groups = append(groups, s.Name)
		}
	}
	return fleetview.Target{
		Config: m.RESTConfig(), ProxyURL: cl.Spec.ProxyURL, ProxyHeader: cl.Spec.ProxyHeader,
		ImpersonatorToken: token, ImpersonableGroups: sortedUnique(groups),
	}, nil
}

// whoAmI asks the member which user the token is (SelfSubjectReview), so
// the binding names the identity the member actually authenticates,
// whatever kind of token it is.
func whoAmI(ctx context.Context, member *rest.Config, token string) (string, error) {
	cfg := rest.AnonymousClientConfig(member)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	if review.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the member reports no user for the impersonator token")
	}
	return review.Status.UserInfo.Username, nil
}

// applyRBAC server-side applies a ClusterRole or ClusterRoleBinding.
func applyRBAC(ctx context.Context, cs kubernetes.Interface, obj client.Object) error {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		body, err := jsonOf(o)
		if err != nil {
			return err
		}
		if _, err := cs.RbacV1().ClusterRoles().Patch(ctx, o.Name, "application/apply-patch+yaml", body, opts.ToPatchOptions()); err != nil {
			return fmt.Errorf("apply ClusterRole %s: %w", o.Name, err)
		}
	case *rbacv1.ClusterRoleBinding:
		body, err := jsonOf(o)
		if err != nil {
			return err
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Patch(ctx, o.Name, "application/apply-patch+yaml", body, opts.ToPatchOptions()); err != nil {
			return fmt.Errorf("apply ClusterRoleBinding %s: %w", o.Name, err)
		}
	}
	return nil
}
