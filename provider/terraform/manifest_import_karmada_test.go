package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// karmadaAppliedConfigMap is ConfigMap default/web (app=web, v=1) as
// Karmada's execution controller leaves it in a member: the template with
// the claim metadata Karmada's detector put on it, the binding's and the
// Work's labels and annotations (pkg/controllers/binding/common.go and
// pkg/controllers/ctrlutil/work.go of karmada-io/karmada), written under
// Karmada's field manager.
func karmadaAppliedConfigMap(cluster string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: "web",
			Labels: map[string]string{
				"app": "web", api.KarmadaLabelManaged: api.KarmadaValueManaged,
				api.KarmadaLabelPolicyPermanentID: "5d1c0c55-policy", api.KarmadaLabelBindingPermanentID: "9f3e-web-binding",
				api.KarmadaLabelWorkPermanentID: fmt.Sprintf("4a2b-web-%d", i),
			},
			Annotations: map[string]string{
				"propagationpolicy.karmada.io/name": "web", "propagationpolicy.karmada.io/namespace": "default",
				"resourcetemplate.karmada.io/uid": "0b4c1f9e-7d2a-4e0b-9a51-6c3f2d8e1a77",
				api.KarmadaAnnotationBindingName:  "web-configmap", api.KarmadaAnnotationBindingNamespace: "default",
				api.KarmadaAnnotationWorkName: "web-7c6b9d8f5", api.KarmadaAnnotationWorkNamespace: "karmada-es-" + cluster,
				api.KarmadaAnnotationConflictResolution: "abort",
			},
		},
		Data: map[string]string{"v": "1"},
	}
}

// TestAccManifestImportKarmadaApplied imports, with an import block and the
// real terraform, the ConfigMap a stopped Karmada applied in two members
// into flotilla_manifest. The import reads both objects; its plan changes
// only what taking them over means (flotilla's ownership labels and
// annotations on each); the apply keeps each object (same UID) and
// Karmada's labels on it; the plan that follows is empty; and a change of
// the template afterwards is applied in place.
func TestAccManifestImportKarmadaApplied(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	f := &importFleet{kubeconfig: env.TestKubeconfig(t), members: startFaultMembersOf(t, env)}
	uids := map[string]types.UID{}
	for i, c := range env.Clusters {
		f.contexts = append(f.contexts, c.Name)
		m := f.members[i]
		cm, err := m.clients.CoreV1().ConfigMaps("default").Create(t.Context(), karmadaAppliedConfigMap(c.Name, i), metav1.CreateOptions{FieldManager: "karmada-controller-manager"})
		if err != nil {
			t.Fatal(err)
		}
		uids[m.name] = cm.UID
	}
	importBlock := fmt.Sprintf("import {\n  to = flotilla_manifest.web\n  id = %q\n}\n", f.importID())
	// checkMembers: each member still holds the object Karmada created,
	// with data v, Karmada's labels and, once taken over, flotilla's.
	checkMembers := func(v string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, m := range f.members {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				cm, err := m.clients.CoreV1().ConfigMaps("default").Get(ctx, "web", metav1.GetOptions{})
				cancel()
				switch {
				case err != nil:
					return fmt.Errorf("%s: %w", m.name, err)
				case cm.UID != uids[m.name]:
					return fmt.Errorf("%s: ConfigMap default/web was re-created: UID %s, Karmada's was %s", m.name, cm.UID, uids[m.name])
				case cm.Data["v"] != v:
					return fmt.Errorf("%s: data.v = %q, want %q", m.name, cm.Data["v"], v)
				case cm.Labels[api.KarmadaLabelManaged] != api.KarmadaValueManaged || cm.Labels["flotilla.io/fleet"] != faultFleet:
					return fmt.Errorf("%s: labels %v, want Karmada's kept and flotilla's fleet %s", m.name, cm.Labels, faultFleet)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: strings.Replace(f.config("1", importBlock), requiredProvidersHCL, "", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("flotilla_manifest.web", plancheck.ResourceActionUpdate),
					expectRenderedChangeOnly("flotilla_manifest.web", "m1", "m2"),
				}},
				Check: checkMembers("1"),
			},
			{
				Config:           strings.Replace(f.config("1", ""), requiredProvidersHCL, "", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: strings.Replace(f.config("2", ""), requiredProvidersHCL, "", 1),
				Check:  checkMembers("2"),
			},
		},
	})
}

// flotillaMarks are the labels and annotations flotilla puts on what it
// applies (render.LabelManagedBy and the others).
var flotillaMarks = []string{"app.kubernetes.io/managed-by", "flotilla.io/fleet", "flotilla.io/template-id", "flotilla.io/template", "flotilla.io/rendered-hash"}

// renderedChangeOnly checks that the planned change of a flotilla_manifest's
// rendered object in each of clusters adds flotilla's marks and changes
// nothing else.
type renderedChangeOnly struct {
	address  string
	clusters []string
}

func expectRenderedChangeOnly(address string, clusters ...string) plancheck.PlanCheck {
	return renderedChangeOnly{address: address, clusters: clusters}
}

// CheckPlan implements plancheck.PlanCheck.
func (c renderedChangeOnly) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		for _, cluster := range c.clusters {
			was, err := renderedIn(before, cluster)
			if err != nil {
				resp.Error = fmt.Errorf("%s before the plan: %w", c.address, err)
				return
			}
			will, err := renderedIn(after, cluster)
			if err != nil {
				resp.Error = fmt.Errorf("%s after the plan: %w", c.address, err)
				return
			}
			meta, _ := will["metadata"].(map[string]any)
			for _, field := range []string{"labels", "annotations"} {
				m, _ := meta[field].(map[string]any)
				for _, k := range flotillaMarks {
					delete(m, k)
				}
				if len(m) == 0 {
					delete(meta, field)
				}
			}
			if diff := cmp.Diff(was, will); diff != "" {
				resp.Error = fmt.Errorf("%s: the plan changes rendered[%s] beyond flotilla's marks (-imported +planned):\n%s", c.address, cluster, diff)
				return
			}
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// renderedIn decodes rendered[cluster] of a flotilla_manifest's values.
func renderedIn(values map[string]any, cluster string) (map[string]any, error) {
	rendered, _ := values["rendered"].(map[string]any)
	s, ok := rendered[cluster].(string)
	if !ok {
		return nil, fmt.Errorf("no rendered object for cluster %s (rendered = %v)", cluster, values["rendered"])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("rendered[%s]: %w", cluster, err)
	}
	return out, nil
}
