package member

import (
	"fmt"
	"slices"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// inlineOnlySuffix ends every refusal of an InlineOnly connection, so the
// reader knows what to write instead.
const inlineOnlySuffix = "only inline credentials (token, client-certificate-data, client-key-data, certificate-authority-data) are accepted for this cluster"

// checkInline refuses, for an InlineOnly connection, the ways that are not
// inline data: a kubeconfig file, and an exec plugin given with Host. The
// contents of an inline kubeconfig are checked by inlineKubeconfig.
func (c Connection) checkInline() error {
	if !c.InlineOnly {
		return nil
	}
	if c.KubeconfigPath != "" {
		return invalid("kubeconfig_path", "reads a file of the process' machine: refused; pass the kubeconfig inline; %s", inlineOnlySuffix)
	}
	if c.Exec != nil {
		return invalid("exec", "runs a command in the process: refused; %s", inlineOnlySuffix)
	}
	return nil
}

// inlineKubeconfig refuses every entry of a kubeconfig that would make
// client-go run a command or read a local file: a user's exec,
// auth-provider, tokenFile, client-certificate or client-key path, and a
// cluster's certificate-authority path. Every entry counts, not only those
// of the context in use, so that nothing a tenant wrote is loaded later by
// a context change; entries are checked in name order so the error is
// stable. proxy-url is inline data and stays allowed.
func inlineKubeconfig(cfg *clientcmdapi.Config) error {
	refuse := func(kind, name, what string) error {
		return invalid("kubeconfig", "%s %q sets %s: refused; %s", kind, name, what, inlineOnlySuffix)
	}
	for _, name := range sortedKeys(cfg.AuthInfos) {
		user := cfg.AuthInfos[name]
		switch {
		case user == nil:
		case user.Exec != nil:
			return refuse("user", name, "exec (a credential plugin, which would run a command in this process)")
		case user.AuthProvider != nil:
			return refuse("user", name, fmt.Sprintf("auth-provider %q (a plugin that may run commands and read local files)", user.AuthProvider.Name))
		case user.TokenFile != "":
			return refuse("user", name, "tokenFile (a file of this process' machine, such as its own service account token)")
		case user.ClientCertificate != "":
			return refuse("user", name, "client-certificate (a file path; use client-certificate-data)")
		case user.ClientKey != "":
			return refuse("user", name, "client-key (a file path; use client-key-data)")
		}
	}
	for _, name := range sortedKeys(cfg.Clusters) {
		if cluster := cfg.Clusters[name]; cluster != nil && cluster.CertificateAuthority != "" {
			return refuse("cluster", name, "certificate-authority (a file path; use certificate-authority-data)")
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
