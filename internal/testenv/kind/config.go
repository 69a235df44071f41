// Package kind runs flotilla's local fleets as kind clusters, through
// sigs.k8s.io/kind's Go library (pinned in go.mod), where a Docker engine
// runs: the same member1 … memberN (and host) that internal/testenv starts
// as processes, reached the same way (a bearer token and the CA, on a
// loopback address), so the commands write the same kubeconfig for either.
//
// This file builds the kind configuration and does no I/O; kind.go talks to
// Docker. Like testenv it is developer tooling: only the fleet and localup
// commands import it, and controlplane and provider never do (depguard).
package kind

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// NodeImage is the node image of every cluster unless a Spec names another:
// the default of the pinned kind release (v0.33.0), Kubernetes v1.37.0, by
// digest. It is the only image whose digest that release's code names, so
// it is the one kind itself vouches for; TestNodeImageIsKindDefault fails
// when a kind upgrade changes the default and this constant does not follow.
const NodeImage = "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"

// APIServerAddress is where every cluster's apiserver is published on the
// machine: loopback only, as the process fleet's are. The port is left to
// kind, which takes a free one, as testenv does.
const APIServerAddress = "127.0.0.1"

// Role says what a cluster is for.
type Role int

const (
	// Member runs workloads, like testenv's Full clusters.
	Member Role = iota
	// Host stores templates and policies for the control plane and runs none
	// of them, like testenv's APIServerOnly cluster and karmada-apiserver.
	Host
)

// Spec describes one kind cluster of a fleet.
type Spec struct {
	// Name is the cluster's name in flotilla and its kubeconfig context
	// (member1, host).
	Name string
	// Prefix goes before Name in the kind cluster's name (and so in its
	// Docker containers' names), so that the fleets of different commands,
	// directories or tests never share a kind cluster.
	Prefix string
	// Role is Member or Host.
	Role Role
	// Labels are added to the cluster's node.
	Labels map[string]string
	// Image is the node image; empty means NodeImage.
	Image string
}

// Prefix is the kind-name prefix of the fleet kept in dir (an absolute
// path): flotilla- and a short hash of dir, so that fleets in different
// directories never share a kind cluster and one directory always finds its
// own, while `kind get clusters` still shows whose they are.
func Prefix(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return "flotilla-" + hex.EncodeToString(sum[:3]) + "-"
}

// ClusterName is the kind cluster's name: Prefix then Name.
func (s Spec) ClusterName() string { return s.Prefix + s.Name }

// kind names the node container <cluster>-control-plane, which is also the
// node's hostname, so the whole must be a DNS label of at most 63 characters.
const nodeSuffix = "-control-plane"

// hostControllers are the kube-controller-manager controllers a Host runs:
// all but those that turn workloads into pods. Karmada's apiserver runs its
// controller-manager without them for the same reason: a Deployment stored
// on the host is a template, whose pods run on members and whose status
// flotilla aggregates; a deployment controller there would run it and
// overwrite that status. The DaemonSet controller stays, because kind's own
// CNI (kindnet) and kube-proxy are DaemonSets, and the node is not Ready
// without them.
var hostControllers = []string{
	"*",
	"-deployment-controller",
	"-replicaset-controller",
	"-statefulset-controller",
	"-job-controller",
	"-cronjob-controller",
	"-replicationcontroller-controller",
	"-horizontal-pod-autoscaler-controller",
	"-disruption-controller",
}

// Config returns kind's configuration of the cluster s describes, or an
// error naming the bad field and the cluster.
func Config(s Spec) (*v1alpha4.Cluster, error) {
	name := s.ClusterName()
	if s.Name == "" {
		return nil, fmt.Errorf("kind cluster %q: name is empty", name)
	}
	if errs := validation.IsDNS1123Label(name + nodeSuffix); len(errs) > 0 {
		return nil, fmt.Errorf("kind cluster %q (prefix %q, name %q): its node %q is not a DNS label: %s",
			name, s.Prefix, s.Name, name+nodeSuffix, strings.Join(errs, "; "))
	}
	for k, v := range s.Labels {
		errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...)
		if len(errs) > 0 {
			return nil, fmt.Errorf("kind cluster %q: node label %s=%s: %s", name, k, v, strings.Join(errs, "; "))
		}
	}
	image := s.Image
	if image == "" {
		image = NodeImage
	}
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:     name,
		Nodes: []v1alpha4.Node{{
			Role:   v1alpha4.ControlPlaneRole,
			Image:  image,
			Labels: maps.Clone(s.Labels),
		}},
		Networking: v1alpha4.Networking{APIServerAddress: APIServerAddress},
	}
	switch s.Role {
	case Member:
	case Host:
		cfg.KubeadmConfigPatchesJSON6902 = hostPatches()
	default:
		return nil, fmt.Errorf("kind cluster %q: unknown role %d", name, s.Role)
	}
	return cfg, nil
}

// hostPatches set kube-controller-manager's --controllers on the host. kind
// renders kubeadm's v1beta4 configuration for Kubernetes v1.36 and later
// (extraArgs is a list) and v1beta3 before (a map); kind applies a patch
// only to the document of its kind and version, so both are given and the
// one that matches the image's Kubernetes takes effect.
func hostPatches() []v1alpha4.PatchJSON6902 {
	controllers := strings.Join(hostControllers, ",")
	return []v1alpha4.PatchJSON6902{
		{
			Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "ClusterConfiguration",
			Patch: fmt.Sprintf(`[{"op": "add", "path": "/controllerManager/extraArgs/-", "value": {"name": "controllers", "value": %q}}]`, controllers),
		},
		{
			Group: "kubeadm.k8s.io", Version: "v1beta3", Kind: "ClusterConfiguration",
			Patch: fmt.Sprintf(`[{"op": "add", "path": "/controllerManager/extraArgs/controllers", "value": %q}]`, controllers),
		},
	}
}
