package testenv

import (
	"bytes"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig to path with one context per cluster,
// named after the cluster (member1 …), and the first cluster's context current.
func (f *Fleet) WriteKubeconfig(path string) error {
	if err := writeKubeconfig(path, f.Clusters); err != nil {
		return fmt.Errorf("write fleet kubeconfig: %w", err)
	}
	return nil
}

func writeKubeconfig(path string, clusters []*Cluster) error {
	return WriteContexts(path, ClusterContexts(clusters))
}

// ClusterContexts names each cluster's context after the cluster, as a
// fleet's kubeconfig does.
func ClusterContexts(clusters []*Cluster) []NamedCluster {
	contexts := make([]NamedCluster, len(clusters))
	for i, c := range clusters {
		contexts[i] = NamedCluster{Context: c.Name, Cluster: c}
	}
	return contexts
}

// NamedCluster is one context of a kubeconfig written by WriteContexts.
type NamedCluster struct {
	// Context names the context, its cluster and its user (Context-admin).
	Context string
	// Cluster is the running cluster the context reaches as admin.
	Cluster *Cluster
}

// WriteContexts writes a kubeconfig to path with one context per entry, in
// namespace default, and the first entry's context current. It lets clusters
// of several fleets (a host and its members, say) share one file.
func WriteContexts(path string, contexts []NamedCluster) error {
	cfg := clientcmdapi.NewConfig()
	for _, nc := range contexts {
		name, c := nc.Context, nc.Cluster
		user := name + "-admin"
		cluster := clientcmdapi.NewCluster()
		cluster.Server = c.Host
		cluster.CertificateAuthorityData = bytes.Clone(c.CAData)
		cfg.Clusters[name] = cluster
		auth := clientcmdapi.NewAuthInfo()
		auth.Token = c.Token
		cfg.AuthInfos[user] = auth
		ctx := clientcmdapi.NewContext()
		ctx.Cluster, ctx.AuthInfo, ctx.Namespace = name, user, "default"
		cfg.Contexts[name] = ctx
	}
	if len(contexts) > 0 {
		cfg.CurrentContext = contexts[0].Context
	}
	return clientcmd.WriteToFile(*cfg, path)
}
