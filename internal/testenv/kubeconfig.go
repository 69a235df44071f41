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
	cfg := clientcmdapi.NewConfig()
	for _, c := range clusters {
		user := c.Name + "-admin"
		cluster := clientcmdapi.NewCluster()
		cluster.Server = c.Host
		cluster.CertificateAuthorityData = bytes.Clone(c.CAData)
		cfg.Clusters[c.Name] = cluster
		auth := clientcmdapi.NewAuthInfo()
		auth.Token = c.Token
		cfg.AuthInfos[user] = auth
		ctx := clientcmdapi.NewContext()
		ctx.Cluster, ctx.AuthInfo, ctx.Namespace = c.Name, user, "default"
		cfg.Contexts[c.Name] = ctx
	}
	if len(clusters) > 0 {
		cfg.CurrentContext = clusters[0].Name
	}
	return clientcmd.WriteToFile(*cfg, path)
}
