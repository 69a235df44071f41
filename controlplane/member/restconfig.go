package member

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/version"
)

// Client-side rate limits for a member. client-go's defaults (5 QPS, burst
// 10) throttle a control plane that applies many objects per member.
const (
	defaultQPS   = 50
	defaultBurst = 100
)

// hostEntry names the cluster, user and context of the kubeconfig that
// RESTConfig builds in memory for the host ways of connecting.
const hostEntry = "flotilla"

// RESTConfig validates the connection and builds its *rest.Config with
// client-go's clientcmd, exactly as kubectl would from an equivalent
// kubeconfig. It reads KubeconfigPath but contacts no server and does not run
// an exec plugin (client-go runs it on the first request).
func (c Connection) RESTConfig() (*rest.Config, error) {
	cfg, _, err := c.restConfig()
	return cfg, err
}

// restConfig is RESTConfig that also returns the secrets to scrub from the
// errors of requests made with the config, those of a kubeconfig file
// included.
func (c Connection) restConfig() (*rest.Config, secrets, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	s := c.secrets()
	raw, name, err := c.kubeconfig()
	if err != nil {
		return nil, s, s.scrub(err)
	}
	s = append(s, kubeconfigSecrets(raw)...)
	if c.InlineOnly {
		// Validate checked already; this is the last check before clientcmd
		// could run or read anything.
		if err := inlineKubeconfig(raw); err != nil {
			return nil, s, err
		}
	}
	overrides := &clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{
		TLSServerName:         c.TLSServerName,
		ProxyURL:              c.ProxyURL,
		InsecureSkipTLSVerify: c.Insecure,
	}}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, overrides, nil).ClientConfig()
	if err != nil {
		return nil, s, s.scrub(fmt.Errorf("build client config: %w", err))
	}
	if cfg.QPS == 0 {
		cfg.QPS = defaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = defaultBurst
	}
	cfg.UserAgent = "flotilla/" + version.Version
	return cfg, append(s, restConfigSecrets(cfg)...), nil
}

// kubeconfig returns the kubeconfig the connection stands for, loaded from
// its file, parsed, or built in memory for the host ways, and the context to
// use.
func (c Connection) kubeconfig() (*clientcmdapi.Config, string, error) {
	switch {
	case c.KubeconfigPath != "":
		path, err := expandHome(c.KubeconfigPath)
		if err != nil {
			return nil, "", err
		}
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
		cfg, err := rules.Load()
		if err != nil {
			return nil, "", fmt.Errorf("load kubeconfig %s: %w", c.KubeconfigPath, err)
		}
		name, err := pickContext(cfg, c.Context, "kubeconfig "+c.KubeconfigPath)
		return cfg, name, err
	case len(c.Kubeconfig) > 0:
		cfg, err := clientcmd.Load(c.Kubeconfig)
		if err != nil {
			return nil, "", invalid("kubeconfig", "is not a valid kubeconfig")
		}
		name, err := pickContext(cfg, c.Context, "the kubeconfig")
		return cfg, name, err
	}
	host, err := normalizeHost(c.Host)
	if err != nil {
		return nil, "", err
	}
	cfg := clientcmdapi.NewConfig()
	cluster := clientcmdapi.NewCluster()
	cluster.Server = host
	cluster.CertificateAuthorityData = bytes.Clone(c.ClusterCACertificate)
	cfg.Clusters[hostEntry] = cluster
	user := clientcmdapi.NewAuthInfo()
	user.Token = c.Token
	user.ClientCertificateData = bytes.Clone(c.ClientCertificate)
	user.ClientKeyData = bytes.Clone(c.ClientKey)
	if c.Exec != nil {
		if user.Exec, err = c.Exec.clientcmd(); err != nil {
			return nil, "", err
		}
	}
	cfg.AuthInfos[hostEntry] = user
	entry := clientcmdapi.NewContext()
	entry.Cluster, entry.AuthInfo = hostEntry, hostEntry
	cfg.Contexts[hostEntry] = entry
	cfg.CurrentContext = hostEntry
	return cfg, hostEntry, nil
}

// pickContext returns the context to use: the one asked for, else the
// current one, failing with the list of contexts when it is not there.
func pickContext(cfg *clientcmdapi.Config, name, where string) (string, error) {
	if name == "" {
		name = cfg.CurrentContext
	}
	if name == "" {
		return "", invalid("context", "is required: %s has no current-context (it has %s)", where, contextList(cfg.Contexts))
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return "", invalid("context", "%q is not in %s, which has %s", name, where, contextList(cfg.Contexts))
	}
	return name, nil
}

func contextList(contexts map[string]*clientcmdapi.Context) string {
	if len(contexts) == 0 {
		return "no contexts"
	}
	names := make([]string, 0, len(contexts))
	for name := range contexts {
		names = append(names, fmt.Sprintf("%q", name))
	}
	slices.Sort(names)
	return "contexts " + strings.Join(names, ", ")
}

// clientcmd converts the plugin to client-go's form. The plugin is never
// interactive: flotilla runs unattended.
func (e *ExecConfig) clientcmd() (*clientcmdapi.ExecConfig, error) {
	command, err := expandHome(e.Command)
	if err != nil {
		return nil, err
	}
	apiVersion := e.APIVersion
	if apiVersion == "" {
		apiVersion = ExecAPIVersionV1
	}
	env := make([]clientcmdapi.ExecEnvVar, 0, len(e.Env))
	for name, value := range e.Env {
		env = append(env, clientcmdapi.ExecEnvVar{Name: name, Value: value})
	}
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	return &clientcmdapi.ExecConfig{
		Command:         command,
		Args:            slices.Clone(e.Args),
		Env:             env,
		APIVersion:      apiVersion,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}, nil
}

// expandHome replaces a leading "~/" (or a lone "~") with the user's home
// directory.
func expandHome(path string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", path, err)
	}
	return filepath.Join(home, path[1:]), nil
}

// Fingerprint identifies the physical cluster the connection reaches: a
// SHA-256 over the canonical apiserver URL (lowercase, default port made
// explicit) and the DER bytes of the CA certificates, and nothing secret.
// Two connections with different credentials, or the same cluster under two
// names in a fleet, have the same fingerprint. It reads KubeconfigPath (and a
// CA file it names) but contacts no server. An insecure connection has no CA,
// so only its URL counts.
func (c Connection) Fingerprint() (string, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return "", err
	}
	return fingerprint(cfg)
}

func fingerprint(cfg *rest.Config) (string, error) {
	host, err := canonicalHost(cfg.Host)
	if err != nil {
		return "", err
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return "", fmt.Errorf("read CA file: %w", err)
		}
	}
	h := sha256.New()
	h.Write([]byte(host))
	for _, der := range certificateDERs(ca) {
		h.Write([]byte{0})
		h.Write(der)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalHost writes an apiserver URL one way: https assumed, scheme and
// host lowercase, the default port explicit, no trailing slash.
func canonicalHost(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("apiserver URL is not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = "443"
		if scheme == "http" {
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port) + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// certificateDERs returns the DER bytes of each PEM certificate in a bundle,
// sorted, so that comments, whitespace and order do not change a
// fingerprint. Bytes that hold no PEM certificate count as they are.
func certificateDERs(bundle []byte) [][]byte {
	var ders [][]byte
	rest := bundle
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			ders = append(ders, block.Bytes)
		}
	}
	if len(ders) == 0 {
		if trimmed := bytes.TrimSpace(bundle); len(trimmed) > 0 {
			return [][]byte{trimmed}
		}
		return nil
	}
	slices.SortFunc(ders, bytes.Compare)
	return slices.CompactFunc(ders, bytes.Equal)
}
