package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

const (
	// waitReady bounds kind's wait for the node to be Ready after kubeadm;
	// a cold image pull comes before it and is not bounded.
	waitReady = 3 * time.Minute
	// adminName names the ServiceAccount, its cluster-admin binding and its
	// token Secret in kube-system of every cluster.
	adminName      = "flotilla-admin"
	adminNamespace = metav1.NamespaceSystem
	tokenTimeout   = time.Minute
)

// Docker returns nil when a Docker engine answers `docker info`, and
// otherwise an error that says so, for a command to print or a test to skip
// with.
func Docker(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kind clusters need a running Docker engine, and `docker info` failed: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Fleet makes and removes the kind clusters of one fleet directory. Kind's
// own admin kubeconfigs go to Dir/kind, never to ~/.kube/config.
type Fleet struct {
	// Dir holds one directory per cluster (kubeconfig, as testenv writes it)
	// and kind's admin kubeconfigs.
	Dir string
	// Logf receives kind's progress lines, each naming its cluster.
	Logf func(format string, args ...any)
}

// provider is kind's Docker provider, logging as the named cluster.
func (f *Fleet) provider(name string) *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithLogger(logger{cluster: name, logf: f.Logf}), cluster.ProviderWithDocker())
}

// kindKubeconfig is where kind writes, and on delete removes, its own admin
// kubeconfig of the named kind cluster.
func (f *Fleet) kindKubeconfig(kindName string) string {
	return filepath.Join(f.Dir, "kind", kindName+".kubeconfig")
}

// Existing lists the kind clusters on this Docker engine, whoever made them.
func (f *Fleet) Existing() ([]string, error) {
	names, err := f.provider("").List()
	if err != nil {
		return nil, fmt.Errorf("list kind clusters: %w", err)
	}
	return names, nil
}

// Free fails when a cluster of specs exists already: this fleet did not make
// it, so it must neither adopt it nor, after a failed create, delete it.
func (f *Fleet) Free(specs []Spec) error {
	existing, err := f.Existing()
	if err != nil {
		return err
	}
	for _, s := range specs {
		if slices.Contains(existing, s.ClusterName()) {
			return fmt.Errorf("kind cluster %s (%s) already exists and was not made for %s: delete it (`kind delete cluster --name %s`) or choose another -dir",
				s.ClusterName(), s.Name, f.Dir, s.ClusterName())
		}
	}
	return nil
}

// Up makes the clusters of specs, after checking that Docker runs and none
// of them exists already, and after passing their kind names to record, so
// that a caller which records them before they exist deletes exactly those
// later, even after an interrupted Up, and never a cluster it did not make.
func (f *Fleet) Up(ctx context.Context, specs []Spec, record func(kindNames []string) error) ([]*testenv.Cluster, error) {
	for _, s := range specs {
		if _, err := Config(s); err != nil {
			return nil, err
		}
	}
	if err := Docker(ctx); err != nil {
		return nil, err
	}
	if err := f.Free(specs); err != nil {
		return nil, err
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.ClusterName()
	}
	if err := record(names); err != nil {
		return nil, err
	}
	return f.Create(ctx, specs)
}

// Create makes the clusters of specs side by side, each with a cluster-admin
// ServiceAccount token, and returns them as testenv describes a cluster (name,
// loopback URL, token, CA, a kubeconfig of its own), in the order of specs.
// Only the exported fields of those Clusters are set: they are for writing
// kubeconfigs and building clients, not for testenv's process control. On
// failure it deletes every cluster of specs again; call Free first, so that
// these are all its own.
func (f *Fleet) Create(ctx context.Context, specs []Spec) ([]*testenv.Cluster, error) {
	out := make([]*testenv.Cluster, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() { out[i], errs[i] = f.create(ctx, s) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = s.ClusterName()
		}
		return nil, errors.Join(err, f.Delete(names))
	}
	return out, nil
}

func (f *Fleet) create(ctx context.Context, s Spec) (*testenv.Cluster, error) {
	cfg, err := Config(s)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	p := f.provider(cfg.Name)
	if err := p.Create(cfg.Name,
		cluster.CreateWithV1Alpha4Config(cfg),
		cluster.CreateWithKubeconfigPath(f.kindKubeconfig(cfg.Name)),
		cluster.CreateWithWaitForReady(waitReady),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	); err != nil {
		return nil, fmt.Errorf("create kind cluster %s (%s): %w", cfg.Name, s.Name, err)
	}
	raw, err := p.KubeConfig(cfg.Name, false)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of kind cluster %s: %w", cfg.Name, err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of kind cluster %s: %w", cfg.Name, err)
	}
	token, err := adminToken(ctx, rc)
	if err != nil {
		return nil, fmt.Errorf("kind cluster %s: %w", cfg.Name, err)
	}
	dir := filepath.Join(f.Dir, s.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	c := &testenv.Cluster{Name: s.Name, Host: rc.Host, Token: token, CAData: rc.CAData, Dir: dir, KubeconfigPath: filepath.Join(dir, "kubeconfig")}
	if err := testenv.WriteContexts(c.KubeconfigPath, []testenv.NamedCluster{{Context: c.Name, Cluster: c}}); err != nil {
		return nil, fmt.Errorf("write kubeconfig of kind cluster %s: %w", cfg.Name, err)
	}
	f.Logf("kind: %s ready at %s as kind cluster %s (%s)", s.Name, c.Host, cfg.Name, time.Since(begin).Round(100*time.Millisecond))
	return c, nil
}

// adminToken gives the cluster a ServiceAccount bound to cluster-admin and
// returns its long-lived token, so a kind cluster is reached with a bearer
// token and its CA, as testenv's are and as flotilla's Cluster Secrets hold
// them (Karmada's push-mode join does the same).
func adminToken(ctx context.Context, rc *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: adminNamespace, Name: adminName}}
	if _, err := cs.CoreV1().ServiceAccounts(adminNamespace).Create(ctx, sa, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return "", fmt.Errorf("create ServiceAccount %s/%s: %w", adminNamespace, adminName, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: adminName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: adminNamespace, Name: adminName}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return "", fmt.Errorf("create ClusterRoleBinding %s: %w", adminName, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   adminNamespace,
			Name:        adminName + "-token",
			Annotations: map[string]string{corev1.ServiceAccountNameKey: adminName},
		},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if _, err := cs.CoreV1().Secrets(adminNamespace).Create(ctx, secret, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return "", fmt.Errorf("create Secret %s/%s: %w", adminNamespace, secret.Name, err)
	}
	// kube-controller-manager's token controller fills the Secret in.
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	last := "not filled in yet"
	for {
		got, err := cs.CoreV1().Secrets(adminNamespace).Get(ctx, secret.Name, metav1.GetOptions{})
		switch {
		case err != nil:
			last = err.Error()
		case len(got.Data[corev1.ServiceAccountTokenKey]) > 0:
			return string(got.Data[corev1.ServiceAccountTokenKey]), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("token Secret %s/%s: %s: %w", adminNamespace, secret.Name, last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Delete deletes the named kind clusters, and kind's kubeconfigs of them; a
// cluster that is not there is no error, so a second Delete does nothing.
func (f *Fleet) Delete(kindNames []string) error {
	errs := make([]error, len(kindNames))
	var wg sync.WaitGroup
	for i, name := range kindNames {
		wg.Go(func() {
			if err := f.provider(name).Delete(name, f.kindKubeconfig(name)); err != nil {
				errs[i] = fmt.Errorf("delete kind cluster %s: %w", name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Stop stops the node containers of the named kind cluster (docker stop), so
// the member becomes unreachable, as when testenv's processes stop; Delete
// still removes it.
func (f *Fleet) Stop(ctx context.Context, kindName string) error {
	nodes, err := f.provider(kindName).ListNodes(kindName)
	if err != nil {
		return fmt.Errorf("list nodes of kind cluster %s: %w", kindName, err)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("kind cluster %s has no nodes", kindName)
	}
	for _, n := range nodes {
		if out, err := exec.CommandContext(ctx, "docker", "stop", n.String()).CombinedOutput(); err != nil {
			return fmt.Errorf("stop node %s of kind cluster %s: %w: %s", n, kindName, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// logger passes kind's user-facing lines (verbosity 0, warnings, errors) to
// logf, prefixed with the cluster, since clusters are made side by side.
type logger struct {
	cluster string
	logf    func(string, ...any)
}

func (l logger) print(level, msg string) {
	if l.logf == nil {
		return
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return
	}
	l.logf("kind: %s:%s %s", l.cluster, level, msg)
}

func (l logger) Warn(msg string)                   { l.print(" warning:", msg) }
func (l logger) Warnf(format string, args ...any)  { l.Warn(fmt.Sprintf(format, args...)) }
func (l logger) Error(msg string)                  { l.print(" error:", msg) }
func (l logger) Errorf(format string, args ...any) { l.Error(fmt.Sprintf(format, args...)) }
func (l logger) V(v log.Level) log.InfoLogger      { return infoLogger{l: l, on: v <= 0} }

type infoLogger struct {
	l  logger
	on bool
}

func (i infoLogger) Info(msg string) {
	if i.on {
		i.l.print("", msg)
	}
}
func (i infoLogger) Infof(format string, args ...any) { i.Info(fmt.Sprintf(format, args...)) }
func (i infoLogger) Enabled() bool                    { return i.on }
