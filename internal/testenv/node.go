package testenv

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeSpec describes the fake nodes kwok runs in each cluster of a Full fleet.
// Zero fields take the defaults: one node with cpu 32, memory 256Gi, pods 110.
type NodeSpec struct {
	// Count is how many nodes each cluster gets.
	Count int
	// CPU, Memory and Pods are the node's capacity, and also its allocatable.
	CPU, Memory, Pods resource.Quantity
	// Labels are added to the node's labels, overriding the defaults
	// (kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch, type=kwok).
	Labels map[string]string
}

func (s NodeSpec) withDefaults() NodeSpec {
	if s.Count == 0 {
		s.Count = 1
	}
	if s.CPU.IsZero() {
		s.CPU = resource.MustParse("32")
	}
	if s.Memory.IsZero() {
		s.Memory = resource.MustParse("256Gi")
	}
	if s.Pods.IsZero() {
		s.Pods = resource.MustParse("110")
	}
	return s
}

// kwokAnnotation marks a node as kwok's to keep Ready and run pods on.
const kwokAnnotation = "kwok.x-k8s.io/node"

// AddNode creates another fake node in a Full cluster and waits until it is
// Ready and schedulable. Zero fields of spec take NodeSpec's defaults; Count
// is ignored.
func (c *Cluster) AddNode(ctx context.Context, name string, spec NodeSpec) error {
	if c.mode != Full {
		return fmt.Errorf("add node %s to cluster %s: needs a Full cluster, which runs kwok", name, c.Name)
	}
	if err := createNode(ctx, c.client, name, spec.withDefaults()); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	kwok := c.component(binKwok)
	if err := waitFor(ctx, "node "+name+" Ready", kwok, c.processes(), func(ctx context.Context) error {
		return nodeSchedulable(ctx, c.client, name)
	}); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	return nil
}

func createNode(ctx context.Context, client kubernetes.Interface, name string, spec NodeSpec) error {
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	maps.Copy(labels, spec.Labels)
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    spec.CPU,
		corev1.ResourceMemory: spec.Memory,
		corev1.ResourcePods:   spec.Pods,
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{kwokAnnotation: "fake"},
		},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "linux",
				Architecture:    "amd64",
				KubeletVersion:  "fake",
			},
		},
	}
	_, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err := ignoreExists(err); err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

// nodeSchedulable succeeds once the node is Ready and kube-controller-manager
// has lifted the taints that would keep the scheduler away.
func nodeSchedulable(ctx context.Context, client kubernetes.Interface, name string) error {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return errors.New("node is not Ready")
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeNotReady || taint.Key == corev1.TaintNodeUnreachable {
			return fmt.Errorf("node still has taint %s", taint.Key)
		}
	}
	return nil
}

// ignoreExists treats an object that is already there as created.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
