package crossplane

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// checkMemberKubeconfig refuses a member kubeconfig, from a Cluster managed
// resource's Secret, that would run a command or read a local file in the
// control plane: a Cluster managed resource is namespaced, so its writer is
// a tenant, and no operator option lifts this.
func checkMemberKubeconfig(kubeconfig []byte) error {
	return member.Connection{Kubeconfig: kubeconfig, InlineOnly: true}.Validate()
}

// Error messages of the connector; wrapped once with the object's name.
const (
	errTrackUsage      = "track provider config usage"
	errNoConfigRef     = "spec.providerConfigRef is not set"
	errUnknownPCKind   = "spec.providerConfigRef.kind must be ProviderConfig or ClusterProviderConfig"
	errNoSecretRef     = "spec.credentials.secretRef is required when spec.credentials.source is Secret"
	errSecretNamespace = "spec.credentials.secretRef.namespace must be the ProviderConfig's own namespace"
	errInjectedInNS    = "spec.credentials.source InjectedIdentity is only allowed in a ClusterProviderConfig: " +
		"a namespaced ProviderConfig would hand the provider's own identity to whoever writes in its namespace"
)

// host is a connection to the flotilla host apiserver, with the settings of
// the provider config it came from.
type host struct {
	client client.Client
	fleet  string
	// interpreters caches the host's resource interpreter, so an Observe
	// does not run every customization's script again.
	interpreters *hoststore.Interpreters
}

// hostConnector resolves a managed resource's provider config into a host
// client, tracking the usage first, as crossplane-runtime asks. Host clients
// are cached per provider config (hostCache), so a reconcile does not
// rediscover the host's API; the cache is bounded and drops a config's
// client when its credentials change or it is deleted.
type hostConnector struct {
	kube     client.Client
	usage    resource.ModernTracker
	scheme   *runtime.Scheme
	injected *rest.Config
	// allowExecAndFiles is Options.AllowKubeconfigExecAndFiles: it applies
	// to ClusterProviderConfigs only.
	allowExecAndFiles bool

	// mu serialises building clients, so concurrent reconciles of one
	// config build one client, not one each.
	mu      sync.Mutex
	clients *hostCache
}

func newHostConnector(kube client.Client, scheme *runtime.Scheme, injected *rest.Config, allowExecAndFiles bool) *hostConnector {
	return &hostConnector{
		kube:              kube,
		usage:             resource.NewProviderConfigUsageTracker(kube, &v1alpha1.ProviderConfigUsage{}),
		scheme:            scheme,
		injected:          injected,
		allowExecAndFiles: allowExecAndFiles,
		clients:           newHostCache(DefaultHostCacheSize),
	}
}

// connect returns the host of mg's provider config.
func (c *hostConnector) connect(ctx context.Context, mg resource.ModernManaged) (*host, error) {
	if err := c.usage.Track(ctx, mg); err != nil {
		return nil, fmt.Errorf("%s: %w", errTrackUsage, err)
	}
	ref := mg.GetProviderConfigReference()
	if ref == nil {
		return nil, errors.New(errNoConfigRef)
	}
	var spec v1alpha1.ProviderConfigSpec
	key := providerConfigKey{Kind: ref.Kind, Name: ref.Name}
	var generation int64
	// Only a cluster-scoped ClusterProviderConfig is the administrator's:
	// a namespaced ProviderConfig is written by the namespace's tenants.
	admin := false
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		var pc v1alpha1.ProviderConfig
		if err := c.kube.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: ref.Name}, &pc); err != nil {
			return nil, fmt.Errorf("read ProviderConfig %s/%s: %w", mg.GetNamespace(), ref.Name, err)
		}
		if s := pc.Spec.Credentials.SecretRef; s != nil && s.Namespace != pc.Namespace {
			return nil, fmt.Errorf("ProviderConfig %s/%s: %s", pc.Namespace, pc.Name, errSecretNamespace)
		}
		if pc.Spec.Credentials.Source == xpv2.CredentialsSourceInjectedIdentity {
			return nil, fmt.Errorf("ProviderConfig %s/%s: %s", pc.Namespace, pc.Name, errInjectedInNS)
		}
		spec, key.Namespace, generation = pc.Spec, pc.Namespace, pc.Generation
	case v1alpha1.ClusterProviderConfigKind:
		var pc v1alpha1.ClusterProviderConfig
		if err := c.kube.Get(ctx, client.ObjectKey{Name: ref.Name}, &pc); err != nil {
			return nil, fmt.Errorf("read ClusterProviderConfig %s: %w", ref.Name, err)
		}
		spec, generation = pc.Spec, pc.Generation
		admin = true
	default:
		return nil, fmt.Errorf("%s, not %q", errUnknownPCKind, ref.Kind)
	}
	e, err := c.hostClient(ctx, key, generation, spec.Credentials, admin && c.allowExecAndFiles)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", ref.Kind, ref.Name, err)
	}
	fleet := spec.Fleet
	if fleet == "" {
		fleet = v1alpha1.DefaultFleet
	}
	return &host{client: e.client, fleet: fleet, interpreters: e.interpreters}, nil
}

// hostClient returns the cached client of the provider config key, and the
// interpreter cache that goes with it (dropped with the client), built
// from creds. The kubeconfig of a Secret may run exec plugins or read local
// files only when allowExecAndFiles; it is checked before the cache is
// consulted. generation is the config's, recorded so that a later change
// of the config drops the client (forgetChanged).
func (c *hostConnector) hostClient(ctx context.Context, key providerConfigKey, generation int64, creds v1alpha1.ProviderCredentials, allowExecAndFiles bool) (*hostEntry, error) {
	var kubeconfig []byte
	switch creds.Source {
	case xpv2.CredentialsSourceInjectedIdentity:
		// The key cannot collide with a kubeconfig's hash.
	case xpv2.CredentialsSourceSecret:
		ref := creds.SecretRef
		if ref == nil {
			return nil, errors.New(errNoSecretRef)
		}
		var s corev1.Secret
		if err := c.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &s); err != nil {
			return nil, fmt.Errorf("read credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		kubeconfig = s.Data[ref.Key]
		if len(kubeconfig) == 0 {
			return nil, fmt.Errorf("credentials secret %s/%s has no key %q", ref.Namespace, ref.Name, ref.Key)
		}
		// The error names the kubeconfig entry and field, never a value.
		if err := (member.Connection{Kubeconfig: kubeconfig, InlineOnly: !allowExecAndFiles}).Validate(); err != nil {
			return nil, fmt.Errorf("credentials secret %s/%s key %q: %w", ref.Namespace, ref.Name, ref.Key, err)
		}
	default:
		return nil, fmt.Errorf("spec.credentials.source %q is not supported: use Secret or InjectedIdentity", creds.Source)
	}
	// The digest covers the source too: InjectedIdentity has no kubeconfig.
	digest := sha256.Sum256(append([]byte(creds.Source+"\x00"), kubeconfig...))
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.clients.get(key, digest); ok {
		return e, nil
	}
	cfg := c.injected
	if kubeconfig != nil {
		var err error
		// The error names no credential: clientcmd reports syntax, not values.
		if cfg, err = clientcmd.RESTConfigFromKubeConfig(kubeconfig); err != nil {
			return nil, fmt.Errorf("parse host kubeconfig: %w", err)
		}
	}
	if cfg == nil {
		return nil, errors.New("spec.credentials.source InjectedIdentity: the provider has no identity of its own to inject")
	}
	e, err := c.newHostClient(cfg)
	if err != nil {
		return nil, err
	}
	e.digest, e.generation = digest, generation
	e.interpreters = hoststore.NewInterpreters()
	c.clients.put(key, e)
	return e, nil
}

// newHostClient builds a client of cfg with a transport of its own.
// client-go shares transports between configs of equal TLS settings in a
// process-wide cache that nothing here could empty, so a tenant's stream
// of kubeconfigs with new certificates would grow it; a config with a
// Proxy function is never put there. The proxy is client-go's default
// (the environment's, sparing the CIDRs in NO_PROXY) unless the
// kubeconfig names one.
func (c *hostConnector) newHostClient(cfg *rest.Config) (*hostEntry, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Proxy == nil {
		cfg.Proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to host: %w", err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("connect to host: %w", err)
	}
	if err := checkHostGroups(cl.RESTMapper()); err != nil {
		hc.CloseIdleConnections()
		return nil, err
	}
	return &hostEntry{client: cl, http: hc}, nil
}

// checkHostGroups refuses a host whose control plane serves the other
// family of API groups than this process (apis.Use, the crossplane
// command's --api-groups): writing there would fail on every object with
// "no matches for kind", or, worse, find the other family's objects
// unwatched. A host serving neither is let through, so a host whose
// control plane is still installing its CRDs is retried as before.
func checkHostGroups(mapper apimeta.RESTMapper) error {
	mine := apis.Current()
	other := apis.KarmadaGroups
	if mine == other {
		other = apis.FlotillaGroups
	}
	serves := func(g apis.Groups) (bool, error) {
		_, err := mapper.RESTMapping(schema.GroupKind{Group: g.Group("cluster"), Kind: "Cluster"}, g.KindVersion("cluster", "Cluster"))
		if apimeta.IsNoMatchError(err) {
			return false, nil
		}
		return err == nil, err
	}
	ok, err := serves(mine)
	if ok || err != nil {
		if err != nil {
			return fmt.Errorf("connect to host: discover %s: %w", mine.Group("cluster"), err)
		}
		return nil
	}
	if theirs, _ := serves(other); theirs {
		return fmt.Errorf("the host serves %s's API groups (%s), not %s's (%s): run the crossplane provider with --api-groups=%s, as the host's control plane runs",
			other, other.Group("cluster"), mine, mine.Group("cluster"), other)
	}
	return nil
}

// forgetChanged drops the client of a provider config that is gone, being
// deleted or changed since its client was built: its provider config
// reconciler calls it on every event of the config. A config that no
// managed resource uses any more would otherwise keep its client until
// the cache is full.
func (c *hostConnector) forgetChanged(key providerConfigKey, generation int64, exists bool) {
	if !exists {
		c.clients.forget(key)
		return
	}
	c.clients.forgetIfNot(key, generation)
}
