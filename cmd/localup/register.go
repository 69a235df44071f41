package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// hostClient is a client of flotilla's and the built-in kinds on the host.
func hostClient(host *testenv.Cluster) (client.Client, error) {
	scheme, err := shared.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(host.RESTConfig(), client.Options{Scheme: scheme})
}

// registerMembers registers each member as a Cluster on the host, as
// Karmada's push mode does: a Secret in flotilla-system holding the member's
// token and CA, and spec.apiEndpoint; with proxy, an impersonator for the
// cluster proxy too (spec.impersonatorSecretRef). It returns once every
// Cluster is Ready.
func registerMembers(ctx context.Context, host *testenv.Cluster, members []*testenv.Cluster, proxy bool, logf func(string, ...any)) error {
	hub, err := hostClient(host)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.CredentialsNamespace()}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s on the host: %w", ns.Name, err)
	}
	for _, m := range members {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: shared.CredentialsNamespace(), Name: m.Name},
			Data:       map[string][]byte{clusterv1.SecretKeyToken: []byte(m.Token), clusterv1.SecretKeyCA: m.CAData},
		}
		if err := hub.Create(ctx, secret); err != nil {
			return fmt.Errorf("create Secret %s/%s for cluster %s: %w", secret.Namespace, secret.Name, m.Name, err)
		}
		cl := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: m.Name},
			Spec: api.ClusterSpec{
				APIEndpoint: m.Host,
				SecretRef:   &api.LocalSecretReference{Namespace: shared.CredentialsNamespace(), Name: m.Name},
			},
		}
		if proxy {
			token, err := impersonatorToken(ctx, m)
			if err != nil {
				return err
			}
			imp := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: shared.CredentialsNamespace(), Name: m.Name + "-" + impersonatorName},
				Data:       map[string][]byte{clusterv1.SecretKeyToken: []byte(token), clusterv1.SecretKeyCA: m.CAData},
			}
			if err := hub.Create(ctx, imp); err != nil {
				return fmt.Errorf("create Secret %s/%s for cluster %s: %w", imp.Namespace, imp.Name, m.Name, err)
			}
			cl.Spec.ImpersonatorSecretRef = &api.LocalSecretReference{Namespace: shared.CredentialsNamespace(), Name: imp.Name}
		}
		if err := hub.Create(ctx, cl); err != nil {
			return fmt.Errorf("create Cluster %s: %w", m.Name, err)
		}
	}
	for _, m := range members {
		if err := waitReady(ctx, hub, m.Name); err != nil {
			return err
		}
		logf("localup: Cluster %s Ready (%s)", m.Name, m.Host)
	}
	return nil
}

func waitReady(ctx context.Context, hub client.Client, name string) error {
	last := "no Ready condition yet"
	for {
		var cl clusterv1.Cluster
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
			last = err.Error()
		} else if c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady); c != nil {
			if c.Status == metav1.ConditionTrue {
				return nil
			}
			last = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s is not Ready: %s: %w", name, last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
