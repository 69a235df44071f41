package member

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// Connection says how to reach one member cluster's apiserver. The
// Terraform and Crossplane front ends fill it; ValidationError names its
// fields by the snake_case names given in each field's comment, which are
// also the front ends' attribute names.
//
// Exactly one way of connecting must be set:
//   - KubeconfigPath, with an optional Context;
//   - Kubeconfig (a kubeconfig file's contents), with an optional Context;
//   - Host with Token;
//   - Host with ClientCertificate and ClientKey;
//   - Host with Exec.
//
// With Host, ClusterCACertificate verifies the apiserver's serving
// certificate; when it is empty the system's roots do, as with kubectl.
// Verification is off only when Insecure is set, which excludes
// ClusterCACertificate. TLSServerName, ProxyURL and Insecure apply to every
// way and override what a kubeconfig says.
//
// Token, ClientKey, Exec.Env values, the password of ProxyURL and everything
// in Kubeconfig are secret: String redacts them and no error of this package
// contains them. The JSON form, with the snake_case names, is what the
// Terraform provider records so that refresh and destroy can reach members
// (it is stored as a sensitive value).
type Connection struct {
	// KubeconfigPath (kubeconfig_path) is a kubeconfig file; a leading "~/"
	// is the user's home directory. Only this file is read, never $KUBECONFIG.
	KubeconfigPath string `json:"kubeconfig_path,omitempty"`
	// Kubeconfig (kubeconfig) is a whole kubeconfig, inline.
	Kubeconfig []byte `json:"kubeconfig,omitempty"`
	// Context (context) picks a context of the kubeconfig; empty means its
	// current-context.
	Context string `json:"context,omitempty"`

	// Host (host) is the apiserver URL. "https://" is assumed when the
	// scheme is missing; plain http is refused because it would expose the
	// credentials.
	Host string `json:"host,omitempty"`
	// Token (token) is a bearer token.
	Token string `json:"token,omitempty"`
	// ClientCertificate (client_certificate) is a PEM client certificate.
	ClientCertificate []byte `json:"client_certificate,omitempty"`
	// ClientKey (client_key) is the PEM private key of ClientCertificate.
	ClientKey []byte `json:"client_key,omitempty"`
	// Exec (exec) runs a credential plugin, as a kubeconfig's user.exec does.
	Exec *ExecConfig `json:"exec,omitempty"`
	// ClusterCACertificate (cluster_ca_certificate) is the PEM CA bundle that
	// signed the apiserver's serving certificate.
	ClusterCACertificate []byte `json:"cluster_ca_certificate,omitempty"`

	// Insecure (insecure) turns off verification of the serving certificate.
	Insecure bool `json:"insecure,omitempty"`
	// TLSServerName (tls_server_name) is the name the serving certificate is
	// checked against, when it differs from the host.
	TLSServerName string `json:"tls_server_name,omitempty"`
	// ProxyURL (proxy_url) is an http, https or socks5 proxy.
	ProxyURL string `json:"proxy_url,omitempty"`

	// InlineOnly refuses everything that would run a command or read a file
	// of the process' machine: KubeconfigPath, Exec, and in a kubeconfig a
	// user's exec, auth-provider, tokenFile, client-certificate and
	// client-key paths and a cluster's certificate-authority path. Set it
	// when the connection comes from someone other than the operator of the
	// process (continuous mode and Crossplane), where an exec plugin would
	// run with the process' identity and a tokenFile would send the
	// process' own token to the connection's server. Who wrote a connection
	// is the caller's knowledge, so it is not part of the JSON form.
	InlineOnly bool `json:"-"`
}

// ExecConfig runs a credential plugin that prints an ExecCredential, with
// the semantics of client-go's clientcmdapi.ExecConfig. The plugin never
// talks to a terminal.
type ExecConfig struct {
	// APIVersion (exec.api_version) is the ExecCredential version the plugin
	// speaks: client.authentication.k8s.io/v1 (the default) or v1beta1.
	APIVersion string `json:"api_version,omitempty"`
	// Command (exec.command) is the executable; a leading "~/" is the user's
	// home directory, a bare name is looked up in $PATH.
	Command string `json:"command,omitempty"`
	// Args (exec.args) are its arguments.
	Args []string `json:"args,omitempty"`
	// Env (exec.env) is added to the plugin's environment. Values are secret.
	Env map[string]string `json:"env,omitempty"`
}

// Exec credential API versions client-go understands.
const (
	// ExecAPIVersionV1 is the default ExecCredential version.
	ExecAPIVersionV1 = "client.authentication.k8s.io/v1"
	// ExecAPIVersionV1beta1 is the older ExecCredential version.
	ExecAPIVersionV1beta1 = "client.authentication.k8s.io/v1beta1"
)

// ValidationError is an invalid Connection. Field is the snake_case name of
// the offending field ("host", "exec.command"), so a front end can point at
// its own attribute path.
type ValidationError struct {
	// Field is the offending field.
	Field string
	// Reason says what is wrong; it never quotes a secret.
	Reason string
}

// Error returns "invalid connection: <field>: <reason>".
func (e *ValidationError) Error() string {
	return "invalid connection: " + e.Field + ": " + e.Reason
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Validate checks that exactly one way of connecting is set and that each
// field is well-formed. It does no I/O: a kubeconfig file is read only by
// RESTConfig, so a file written later in the same Terraform apply is fine.
func (c Connection) Validate() error {
	var ways []string
	if c.KubeconfigPath != "" {
		ways = append(ways, "kubeconfig_path")
	}
	if len(c.Kubeconfig) > 0 {
		ways = append(ways, "kubeconfig")
	}
	if c.Host != "" {
		ways = append(ways, "host")
	}
	switch len(ways) {
	case 0:
		return invalid("host", "no way to connect: set one of kubeconfig_path, kubeconfig or host")
	case 1:
	default:
		return invalid(ways[1], "cannot be combined with %s: set exactly one of kubeconfig_path, kubeconfig or host", ways[0])
	}
	if c.Insecure && len(c.ClusterCACertificate) > 0 {
		return invalid("insecure", "cannot be combined with cluster_ca_certificate: either verify the server with the CA or, explicitly, not at all")
	}
	if err := validateProxyURL(c.ProxyURL); err != nil {
		return err
	}
	if err := c.checkInline(); err != nil {
		return err
	}
	if c.Host == "" {
		return c.validateKubeconfig()
	}
	return c.validateHost()
}

// hostOnly lists the fields that only make sense with Host, by field name.
func (c Connection) hostOnly() []string {
	var set []string
	if c.Token != "" {
		set = append(set, "token")
	}
	if len(c.ClientCertificate) > 0 {
		set = append(set, "client_certificate")
	}
	if len(c.ClientKey) > 0 {
		set = append(set, "client_key")
	}
	if c.Exec != nil {
		set = append(set, "exec")
	}
	if len(c.ClusterCACertificate) > 0 {
		set = append(set, "cluster_ca_certificate")
	}
	return set
}

func (c Connection) validateKubeconfig() error {
	way := "kubeconfig_path"
	if c.KubeconfigPath == "" {
		way = "kubeconfig"
	}
	if set := c.hostOnly(); len(set) > 0 {
		return invalid(set[0], "is only used with host; with %s the kubeconfig holds the credentials", way)
	}
	if c.KubeconfigPath != "" {
		return nil
	}
	cfg, err := clientcmd.Load(c.Kubeconfig)
	if err != nil {
		// The parser's message may quote the input; say only where it failed.
		return invalid("kubeconfig", "is not a valid kubeconfig")
	}
	if c.InlineOnly {
		if err := inlineKubeconfig(cfg); err != nil {
			return err
		}
	}
	name := c.Context
	if name == "" {
		name = cfg.CurrentContext
	}
	if name == "" {
		return invalid("context", "is required: the kubeconfig has no current-context")
	}
	if _, ok := cfg.Contexts[name]; !ok {
		return invalid("context", "%q is not in the kubeconfig, which has %s", name, contextList(cfg.Contexts))
	}
	return nil
}

func (c Connection) validateHost() error {
	if c.Context != "" {
		return invalid("context", "is only used with kubeconfig_path or kubeconfig")
	}
	if _, err := normalizeHost(c.Host); err != nil {
		return err
	}
	var auth []string
	if c.Token != "" {
		auth = append(auth, "token")
	}
	if len(c.ClientCertificate) > 0 || len(c.ClientKey) > 0 {
		auth = append(auth, "client_certificate")
	}
	if c.Exec != nil {
		auth = append(auth, "exec")
	}
	switch len(auth) {
	case 0:
		return invalid("token", "host needs credentials: set one of token, client_certificate with client_key, or exec")
	case 1:
	default:
		return invalid(auth[1], "cannot be combined with %s: set exactly one of token, client_certificate with client_key, or exec", auth[0])
	}
	if len(c.ClusterCACertificate) > 0 && !x509.NewCertPool().AppendCertsFromPEM(c.ClusterCACertificate) {
		return invalid("cluster_ca_certificate", "holds no PEM certificate")
	}
	switch auth[0] {
	case "client_certificate":
		return c.validateClientCertificate()
	case "exec":
		return c.Exec.validate()
	}
	return nil
}

func (c Connection) validateClientCertificate() error {
	if len(c.ClientKey) == 0 {
		return invalid("client_key", "is required with client_certificate")
	}
	if len(c.ClientCertificate) == 0 {
		return invalid("client_certificate", "is required with client_key")
	}
	if block, _ := pem.Decode(c.ClientCertificate); block == nil || block.Type != "CERTIFICATE" {
		return invalid("client_certificate", "is not a PEM certificate")
	}
	if block, _ := pem.Decode(c.ClientKey); block == nil || !strings.HasSuffix(block.Type, "PRIVATE KEY") {
		return invalid("client_key", "is not a PEM private key")
	}
	return nil
}

func (e *ExecConfig) validate() error {
	if e.Command == "" {
		return invalid("exec.command", "is required")
	}
	switch e.APIVersion {
	case "", ExecAPIVersionV1, ExecAPIVersionV1beta1:
	default:
		return invalid("exec.api_version", "must be %s or %s, got %q", ExecAPIVersionV1, ExecAPIVersionV1beta1, e.APIVersion)
	}
	for name := range e.Env {
		if name == "" || strings.Contains(name, "=") {
			return invalid("exec.env", "has an invalid variable name %q", name)
		}
	}
	return nil
}

// normalizeHost returns the host as an https URL without a trailing slash.
// Its errors never quote a user:password part.
func normalizeHost(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return "", invalid("host", "is not a URL")
	}
	switch {
	case u.User != nil:
		return "", invalid("host", "must not carry a user or password; use token, client_certificate or exec")
	case u.Scheme == "http":
		return "", invalid("host", "must use https: plain http would send the credentials in the clear")
	case u.Scheme != "https":
		return "", invalid("host", "must be an https URL, got scheme %q", u.Scheme)
	case u.Hostname() == "":
		return "", invalid("host", "has no host name")
	case u.RawQuery != "" || u.Fragment != "":
		return "", invalid("host", "must not have a query or fragment")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

func validateProxyURL(proxy string) error {
	if proxy == "" {
		return nil
	}
	u, err := url.Parse(proxy)
	if err != nil {
		return invalid("proxy_url", "is not a URL")
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return invalid("proxy_url", "must use http, https or socks5, got %s", u.Redacted())
	}
	if u.Host == "" {
		return invalid("proxy_url", "has no host: %s", u.Redacted())
	}
	return nil
}

// String describes the connection without any secret, e.g.
// "host https://10.0.0.1:6443 with token, CA set". It makes %v and %+v safe.
func (c Connection) String() string {
	var b strings.Builder
	switch {
	case c.KubeconfigPath != "":
		fmt.Fprintf(&b, "kubeconfig %s", c.KubeconfigPath)
	case len(c.Kubeconfig) > 0:
		b.WriteString("inline kubeconfig")
	case c.Host != "":
		host, err := normalizeHost(c.Host)
		if err != nil {
			host = "[invalid]"
		}
		fmt.Fprintf(&b, "host %s", host)
	default:
		b.WriteString("empty connection")
	}
	if c.Context != "" {
		fmt.Fprintf(&b, " context %s", c.Context)
	}
	var with []string
	if c.Token != "" {
		with = append(with, "token")
	}
	if len(c.ClientCertificate) > 0 || len(c.ClientKey) > 0 {
		with = append(with, "client certificate")
	}
	if c.Exec != nil {
		with = append(with, c.Exec.String())
	}
	if len(with) > 0 {
		b.WriteString(" with " + strings.Join(with, ", "))
	}
	if len(c.ClusterCACertificate) > 0 {
		b.WriteString(", CA set")
	}
	if c.Insecure {
		b.WriteString(", insecure")
	}
	if c.TLSServerName != "" {
		b.WriteString(", TLS server name " + c.TLSServerName)
	}
	if c.ProxyURL != "" {
		b.WriteString(", proxy " + redactURL(c.ProxyURL))
	}
	return b.String()
}

// GoString makes %#v as safe as %v.
func (c Connection) GoString() string { return "member.Connection{" + c.String() + "}" }

// String describes the plugin without its environment's values. It has a
// value receiver so that both ExecConfig and *ExecConfig format safely.
func (e ExecConfig) String() string {
	names := make([]string, 0, len(e.Env))
	for name := range e.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	s := "exec plugin " + e.Command
	if len(names) > 0 {
		s += " (env " + strings.Join(names, ", ") + ")"
	}
	return s
}

// GoString makes %#v as safe as %v.
func (e ExecConfig) GoString() string { return "member.ExecConfig{" + e.String() + "}" }

// redactURL hides a URL's password; an unparsable URL is hidden whole, since
// it cannot be told which part is secret.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "[unparsable URL]"
	}
	return u.Redacted()
}
