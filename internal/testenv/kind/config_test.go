package kind

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// TestNodeImageIsKindDefault keeps NodeImage on the pinned kind release's
// default image: upgrading kind without moving the pin fails here.
func TestNodeImageIsKindDefault(t *testing.T) {
	if NodeImage != defaults.Image {
		t.Fatalf("NodeImage = %s, but the pinned kind's default is %s: pin the new default (and say so in the design decisions)", NodeImage, defaults.Image)
	}
	if !strings.Contains(NodeImage, "@sha256:") {
		t.Fatalf("NodeImage %s is not pinned by digest", NodeImage)
	}
}

func TestConfig(t *testing.T) {
	typeMeta := v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"}
	loopback := v1alpha4.Networking{APIServerAddress: "127.0.0.1"}
	for _, tc := range []struct {
		name    string
		spec    Spec
		want    *v1alpha4.Cluster
		wantErr string
	}{
		{
			name: "member",
			spec: Spec{Name: "member1", Prefix: "flotilla-fleet-"},
			want: &v1alpha4.Cluster{
				TypeMeta: typeMeta, Name: "flotilla-fleet-member1", Networking: loopback,
				Nodes: []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: NodeImage}},
			},
		},
		{
			name: "member with node labels and another image",
			spec: Spec{Name: "member2", Prefix: "t-", Labels: map[string]string{"topology.kubernetes.io/zone": "east"}, Image: "kindest/node:v1.35.0"},
			want: &v1alpha4.Cluster{
				TypeMeta: typeMeta, Name: "t-member2", Networking: loopback,
				Nodes: []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: "kindest/node:v1.35.0", Labels: map[string]string{"topology.kubernetes.io/zone": "east"}}},
			},
		},
		{
			name: "host: no workload controllers",
			spec: Spec{Name: "host", Prefix: "flotilla-cp-", Role: Host},
			want: &v1alpha4.Cluster{
				TypeMeta: typeMeta, Name: "flotilla-cp-host", Networking: loopback,
				Nodes:                        []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: NodeImage}},
				KubeadmConfigPatchesJSON6902: hostPatches(),
			},
		},
		{name: "empty name", spec: Spec{Prefix: "flotilla-fleet-"}, wantErr: `kind cluster "flotilla-fleet-": name is empty`},
		{name: "upper case", spec: Spec{Name: "Member1"}, wantErr: `kind cluster "Member1" (prefix "", name "Member1"): its node "Member1-control-plane" is not a DNS label`},
		{
			name:    "node name too long",
			spec:    Spec{Name: "member1", Prefix: strings.Repeat("p", 42) + "-"},
			wantErr: "is not a DNS label: must be no more than 63 characters",
		},
		{name: "bad label key", spec: Spec{Name: "member1", Labels: map[string]string{"a b": "x"}}, wantErr: `kind cluster "member1": node label a b=x:`},
		{name: "bad label value", spec: Spec{Name: "member1", Labels: map[string]string{"zone": "east west"}}, wantErr: `kind cluster "member1": node label zone=east west:`},
		{name: "unknown role", spec: Spec{Name: "member1", Role: 7}, wantErr: `kind cluster "member1": unknown role 7`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Config(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Config = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("Config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigDoesNotShareLabels: the config holds its own copy of the labels,
// so a caller that reuses its map for the next cluster changes nothing.
func TestConfigDoesNotShareLabels(t *testing.T) {
	labels := map[string]string{"zone": "east"}
	cfg, err := Config(Spec{Name: "member1", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	labels["zone"] = "west"
	if got := cfg.Nodes[0].Labels["zone"]; got != "east" {
		t.Fatalf("node label zone = %q after the caller changed its map, want east", got)
	}
}

// The controller-manager part of the ClusterConfiguration kind renders for
// each kubeadm API version (kind's pkg/cluster/internal/kubeadm templates).
const (
	kubeadmV1beta4 = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
controllerManager:
  extraArgs:
    - name: "enable-hostpath-provisioner"
      value: "true"
`
	kubeadmV1beta3 = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
controllerManager:
  extraArgs:
    enable-hostpath-provisioner: "true"
`
)

// TestHostPatches applies the host's patches the way kind does (YAML to
// JSON, RFC 6902, only to the document of the patch's group, version and
// kind) and checks that kube-controller-manager gets --controllers without
// the workload controllers and keeps kind's own argument.
func TestHostPatches(t *testing.T) {
	const want = "*,-deployment-controller,-replicaset-controller,-statefulset-controller,-job-controller,-cronjob-controller," +
		"-replicationcontroller-controller,-horizontal-pod-autoscaler-controller,-disruption-controller"
	for _, tc := range []struct {
		version, doc string
		wantArgs     any
	}{
		{"v1beta4", kubeadmV1beta4, []any{
			map[string]any{"name": "enable-hostpath-provisioner", "value": "true"},
			map[string]any{"name": "controllers", "value": want},
		}},
		{"v1beta3", kubeadmV1beta3, map[string]any{"enable-hostpath-provisioner": "true", "controllers": want}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			doc, err := yaml.YAMLToJSON([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			applied := 0
			for _, p := range hostPatches() {
				if p.Group+"/"+p.Version != "kubeadm.k8s.io/"+tc.version || p.Kind != "ClusterConfiguration" {
					continue
				}
				raw, err := yaml.YAMLToJSON([]byte(p.Patch))
				if err != nil {
					t.Fatal(err)
				}
				patch, err := jsonpatch.DecodePatch(raw)
				if err != nil {
					t.Fatal(err)
				}
				if doc, err = patch.Apply(doc); err != nil {
					t.Fatalf("patch %s: %v", p.Patch, err)
				}
				applied++
			}
			if applied != 1 {
				t.Fatalf("%d patches match kubeadm %s, want 1", applied, tc.version)
			}
			var got struct {
				ControllerManager struct {
					ExtraArgs any `json:"extraArgs"`
				} `json:"controllerManager"`
			}
			if err := json.Unmarshal(doc, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantArgs, got.ControllerManager.ExtraArgs); diff != "" {
				t.Fatalf("controllerManager.extraArgs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	a, b := Prefix("/home/me/.cache/flotilla/fleet"), Prefix("/home/me/.cache/flotilla/controlplane")
	if a == b {
		t.Fatalf("two directories share the prefix %s", a)
	}
	if again := Prefix("/home/me/.cache/flotilla/fleet"); again != a {
		t.Fatalf("Prefix of one directory changed: %s, then %s", a, again)
	}
	for _, p := range []string{a, b} {
		if !strings.HasPrefix(p, "flotilla-") || len(p) != len("flotilla-")+7 {
			t.Errorf("Prefix = %q, want flotilla-<6 hex digits>-", p)
		}
		if _, err := Config(Spec{Name: "member10", Prefix: p}); err != nil {
			t.Errorf("a cluster named with prefix %s: %v", p, err)
		}
	}
}
