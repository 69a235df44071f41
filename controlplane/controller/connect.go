package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

var errNoCredentials = errors.New("spec.secretRef is not set")

// connectionFor reads the credentials Secret of a Cluster: a kubeconfig, or
// a token (and CA bundle) used with spec.apiEndpoint.
func connectionFor(ctx context.Context, c client.Reader, cl *clusterv1.Cluster) (member.Connection, error) {
	ref := cl.Spec.SecretRef
	if ref == nil {
		return member.Connection{}, errNoCredentials
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &s); err != nil {
		return member.Connection{}, fmt.Errorf("read credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	conn := member.Connection{Insecure: cl.Spec.InsecureSkipTLSVerification, ProxyURL: cl.Spec.ProxyURL}
	if kc := s.Data[clusterv1.SecretKeyKubeconfig]; len(kc) > 0 {
		conn.Kubeconfig = kc
		return conn, nil
	}
	conn.Host = cl.Spec.APIEndpoint
	conn.Token = string(s.Data[clusterv1.SecretKeyToken])
	if !conn.Insecure {
		conn.ClusterCACertificate = s.Data[clusterv1.SecretKeyCA]
	}
	return conn, nil
}

// members reaches member clusters through the shared member.Cache, with the
// credentials of their Cluster objects. It is execution's Connector.
type members struct {
	reader client.Reader
	cache  *member.Cache
}

// client returns the cached client of a Cluster.
func (m *members) client(ctx context.Context, cl *clusterv1.Cluster) (*member.Client, error) {
	conn, err := connectionFor(ctx, m.reader, cl)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	return m.cache.Get(ctx, cl.Name, conn)
}

// Connect returns the execution target of the named cluster.
func (m *members) Connect(ctx context.Context, name string) (execution.Target, error) {
	var cl clusterv1.Cluster
	if err := m.reader.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
		return execution.Target{}, fmt.Errorf("cluster %s: %w", name, err)
	}
	c, err := m.client(ctx, &cl)
	if err != nil {
		return execution.Target{}, err
	}
	return execution.Target{Dynamic: c.Dynamic, Mapper: resettable{c.Mapper}}, nil
}

// resettable adapts the member's mapper, which already asks the member again
// on a miss, to execution's reset hook.
type resettable struct{ meta.RESTMapper }

// Reset is a no-op: the member's mapper refreshes a group on a miss by itself.
func (resettable) Reset() {}
