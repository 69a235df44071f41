package agent

import (
	"context"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// AgentRegistration is what RegisterAgent made for one Pull cluster's
// agent: its hub identity and a token for it.
type AgentRegistration struct {
	// ServiceAccount is the agent's identity, in ClusterLeaseNamespace.
	ServiceAccount string
	// Token is a bound ServiceAccount token (TokenRequest); it is a
	// credential and must never be logged.
	Token string
	// ExpiresAt is when Token stops being accepted.
	ExpiresAt time.Time
}

// AgentServiceAccount is the name of the ServiceAccount of cluster's agent.
func AgentServiceAccount(cluster string) string { return "flotilla-agent-" + cluster }

// agentRoleName names the ClusterRole, and the Roles, of cluster's agent.
func agentRoleName(cluster string) string { return "flotilla:agent:" + cluster }

// RegisterAgent prepares the hub for the agent of the Pull cluster named
// cluster, with the rights of whoever calls it (an administrator), and
// returns a token the agent uses as its own identity; it is idempotent and
// issues a new token each time. In the spirit of `karmadactl register`, it
// makes:
//   - the Cluster, with spec.syncMode Pull (an existing Push Cluster is
//     refused), its execution namespace, its report space
//     (shared.ReportNamespace) and its Lease;
//   - the ServiceAccount flotilla-agent-<cluster> in ClusterLeaseNamespace;
//   - RBAC that lets it read and write only its own Cluster and its status,
//     its own Lease, the Works of its execution namespace and the
//     EndpointSlices of its report space (and read interpreter
//     customizations, which hold no secrets). It may read no
//     Secret, no other Cluster's Works, no binding and no template.
func RegisterAgent(ctx context.Context, c client.Client, cluster string, tokenTTL time.Duration) (AgentRegistration, error) {
	if msgs := api.ValidateClusterName(cluster); len(msgs) > 0 {
		return AgentRegistration{}, fmt.Errorf("cluster name %q: %v", cluster, msgs)
	}
	steps := []func(context.Context, client.Client, string) error{registerCluster, registerNamespaces, registerLease, registerRBAC}
	for _, step := range steps {
		if err := step(ctx, c, cluster); err != nil {
			return AgentRegistration{}, fmt.Errorf("register the agent of cluster %s: %w", cluster, err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ClusterLeaseNamespace(), Name: AgentServiceAccount(cluster)}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(tokenTTL / time.Second))}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return AgentRegistration{}, fmt.Errorf("register the agent of cluster %s: request a token for service account %s/%s: %w", cluster, sa.Namespace, sa.Name, err)
	}
	return AgentRegistration{ServiceAccount: sa.Namespace + "/" + sa.Name, Token: tr.Status.Token, ExpiresAt: tr.Status.ExpirationTimestamp.Time}, nil
}

// registerCluster creates the Pull Cluster, or accepts an existing one
// that is Pull already.
func registerCluster(ctx context.Context, c client.Client, cluster string) error {
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}, Spec: api.ClusterSpec{SyncMode: api.Pull}}
	err := c.Create(ctx, cl)
	if apierrors.IsAlreadyExists(err) {
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
			return fmt.Errorf("read cluster %s: %w", cluster, err)
		}
		if cl.Spec.SyncMode != api.Pull {
			return fmt.Errorf("cluster %s exists with spec.syncMode %s: the control plane pushes to it; set spec.syncMode: Pull (and drop its credentials) before an agent serves it", cluster, syncModeOf(cl))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("create cluster %s: %w", cluster, err)
	}
	return nil
}

// registerNamespaces creates the Lease namespace, the cluster's execution
// namespace (flotilla's, labelled as the binding controller labels it) and
// its report space (shared.ReportNamespace), refusing an execution
// namespace or report space someone else made.
func registerNamespaces(ctx context.Context, c client.Client, cluster string) error {
	leases := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.ClusterLeaseNamespace()}}
	works := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.ExecutionNamespace(cluster), Labels: map[string]string{shared.LabelExecutionSpace: cluster}}}
	reports := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.ReportNamespace(cluster), Labels: map[string]string{shared.LabelReportSpace: cluster}}}
	for _, ns := range []*corev1.Namespace{leases, works, reports} {
		err := c.Create(ctx, ns)
		if apierrors.IsAlreadyExists(err) {
			err = c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		}
		if err != nil {
			return fmt.Errorf("create namespace %s: %w", ns.Name, err)
		}
	}
	if err := shared.CheckReportSpace(reports, cluster); err != nil {
		return err
	}
	return shared.CheckExecutionSpace(works, cluster)
}

// registerLease creates the agent's Lease, never renewed yet, so the agent
// needs no right to create Leases (which RBAC cannot limit by name).
func registerLease(ctx context.Context, c client.Client, cluster string) error {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ClusterLeaseNamespace(), Name: cluster}}
	if err := c.Create(ctx, l); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create lease %s/%s: %w", shared.ClusterLeaseNamespace(), cluster, err)
	}
	return nil
}

// registerRBAC creates the ServiceAccount and its rights (agentRules).
func registerRBAC(ctx context.Context, c client.Client, cluster string) error {
	name, sa := agentRoleName(cluster), AgentServiceAccount(cluster)
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: shared.ClusterLeaseNamespace(), Name: sa}}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ClusterLeaseNamespace(), Name: sa}}
	if err := c.Create(ctx, account); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", shared.ClusterLeaseNamespace(), sa, err)
	}
	clusterRules, leaseRules, workRules, reportRules := agentRules(cluster)
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
	leaseRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ClusterLeaseNamespace(), Name: name}}
	leaseBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ClusterLeaseNamespace(), Name: name}}
	workRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ExecutionNamespace(cluster), Name: name}}
	workBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ExecutionNamespace(cluster), Name: name}}
	reportRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ReportNamespace(cluster), Name: name}}
	reportBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ReportNamespace(cluster), Name: name}}
	roleRef := func(kind string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	objs := []rbacObject{
		{cr, func() { cr.Rules = clusterRules }},
		{crb, func() { crb.RoleRef, crb.Subjects = roleRef("ClusterRole"), subjects }},
		{leaseRole, func() { leaseRole.Rules = leaseRules }},
		{leaseBinding, func() { leaseBinding.RoleRef, leaseBinding.Subjects = roleRef("Role"), subjects }},
		{workRole, func() { workRole.Rules = workRules }},
		{workBinding, func() { workBinding.RoleRef, workBinding.Subjects = roleRef("Role"), subjects }},
		{reportRole, func() { reportRole.Rules = reportRules }},
		{reportBinding, func() { reportBinding.RoleRef, reportBinding.Subjects = roleRef("Role"), subjects }},
	}
	for _, o := range objs {
		if _, err := controllerutil.CreateOrUpdate(ctx, c, o.obj, func() error { o.mutate(); return nil }); err != nil {
			return fmt.Errorf("write %T %s: %w", o.obj, client.ObjectKeyFromObject(o.obj), err)
		}
	}
	return nil
}

// rbacObject is an RBAC object and the function that sets its contents.
type rbacObject struct {
	obj    client.Object
	mutate func()
}

// agentRules are the rights of cluster's agent: to read its own Cluster
// and write its status, and to read interpreter customizations,
// cluster-wide; on its own
// Lease; on the Works (and their status) of its execution namespace; on
// the EndpointSlices of its report space, where it reports what its
// member's exported Services' endpoints are (and nowhere else: the
// collected slices of its execution namespace are the host's). A
// list or watch limited by resourceNames is allowed for a request that
// selects the one name (fieldSelector metadata.name), as the agent's
// cache does (AgentCacheOptions).
func agentRules(cluster string) (clusterRules, leaseRules, workRules, reportRules []rbacv1.PolicyRule) {
	read := []string{"get", "list", "watch"}
	clusterRules = []rbacv1.PolicyRule{
		// Read only: a member that could write its Cluster's spec or
		// labels could attract other clusters' workloads (labels, taints)
		// or have the control plane send another member's credentials to
		// an endpoint of its choosing (syncMode, secretRef, apiEndpoint,
		// proxyURL). Its status and its Lease are all it reports.
		{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"clusters"}, ResourceNames: []string{cluster}, Verbs: read},
		{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"clusters/status"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{configv1.GroupVersion.Group}, Resources: []string{"resourceinterpretercustomizations"}, Verbs: read},
	}
	leaseRules = []rbacv1.PolicyRule{
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "update", "patch"}},
	}
	workRules = []rbacv1.PolicyRule{
		{APIGroups: []string{workv1.GroupVersion.Group}, Resources: []string{"works"}, Verbs: slices.Concat(read, []string{"update", "patch"})},
		{APIGroups: []string{workv1.GroupVersion.Group}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
	}
	reportRules = []rbacv1.PolicyRule{
		{APIGroups: []string{discoveryv1.GroupName}, Resources: []string{"endpointslices"}, Verbs: slices.Concat(read, []string{"create", "update", "patch", "delete"})},
	}
	return clusterRules, leaseRules, workRules, reportRules
}
