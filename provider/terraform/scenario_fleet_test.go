package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// The scenario tests run the configurations under examples/ as they are:
// the .tf files are copied from disk (ConfigDirectory), and only the
// variables change. The members are real and named as `make fleet-up` names
// them (member1, member2, …), so the examples' default contexts hold, and
// the kubeconfig variable points at the test fleet's kubeconfig.

// scenarioFleet is a set of real member clusters with a kubeconfig that
// holds a context per member, as `make fleet-up` writes it.
type scenarioFleet struct {
	env        *testenv.Fleet
	kubeconfig string
	// clients reach each member by its context name, with client-go only,
	// so the checks never go through flotilla.
	clients map[string]kubernetes.Interface
}

// scenarioNamespace is the provider namespace the examples declare
// (source = "flotilla-io/flotilla"); the provider served in-process must
// answer to that address.
const scenarioNamespace = "flotilla-io"

// TestAccScenarios runs the example scenarios, each on a fleet of its own,
// side by side. terraform-plugin-testing reads the provider namespace from
// the process environment, so the parent sets it once for all of them (a
// parallel test may not set the environment) and, being sequential, runs
// while no test that expects the default namespace does; the subtests run
// in parallel with each other only.
func TestAccScenarios(t *testing.T) {
	t.Setenv(resource.EnvTfAccProviderNamespace, scenarioNamespace)
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"ActiveActive", scenarioActiveActive},
		{"GeoRedundant", scenarioGeoRedundant},
		{"ManifestResourceExample", scenarioManifestResourceExample},
		{"RemoteDR", scenarioRemoteDR},
		{"RemoteDRUnreachable", scenarioRemoteDRUnreachable},
		{"StagedRollout", scenarioStagedRollout},
		{"FederatedResourceQuotaExample", scenarioFederatedResourceQuotaExample},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// startScenarioFleet starts n Full members (pods run, so rollouts become
// healthy) and writes their kubeconfig.
func startScenarioFleet(t *testing.T, n int) *scenarioFleet {
	t.Helper()
	if os.Getenv(resource.EnvTfAccProviderNamespace) != scenarioNamespace {
		t.Fatalf("%s is not %s: run the scenario under TestAccScenarios, which sets it", resource.EnvTfAccProviderNamespace, scenarioNamespace)
	}
	env := testenv.Start(t, testenv.Options{Clusters: n})
	f := &scenarioFleet{env: env, kubeconfig: env.TestKubeconfig(t), clients: map[string]kubernetes.Interface{}}
	for _, c := range env.Clusters {
		cs := c.Clientset(t)
		f.clients[c.Name] = cs
	}
	return f
}

// exampleDirectory is the ConfigDirectory of a scenario under examples/.
// The examples configure the provider, so each step names the provider
// factories itself (terraform-plugin-testing refuses them on the TestCase
// then).
func exampleDirectory(name string) config.TestStepConfigFunc {
	return config.StaticDirectory(filepath.Join("..", "..", "examples", name))
}

// vars are the example's variables: kubeconfig_path set to the test
// fleet's, plus extra.
func (f *scenarioFleet) vars(extra config.Variables) config.Variables {
	v := config.Variables{"kubeconfig_path": config.StringVariable(f.kubeconfig)}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

// deployment reads a Deployment from a member; nil when it does not exist.
func (f *scenarioFleet) deployment(ctx context.Context, member, namespace, name string) (*appsv1.Deployment, error) {
	d, err := f.clients[member].AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get deployment %s/%s in %s: %w", namespace, name, member, err)
	}
	return d, nil
}

// expectDeployments checks, in every member, the Deployment's replicas and
// that they run: spec.replicas and status.readyReplicas equal want[member].
// A member missing from want must not have the Deployment. images, when
// given, is the first container's image per member.
func (f *scenarioFleet) expectDeployments(namespace, name string, want map[string]int32, images map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		var errs []string
		for _, member := range sortedKeys(f.clients) {
			d, err := f.deployment(ctx, member, namespace, name)
			if err != nil {
				return err
			}
			n, placed := want[member]
			switch {
			case !placed && d != nil:
				errs = append(errs, fmt.Sprintf("%s: deployment %s/%s exists, want none", member, namespace, name))
			case !placed:
			case d == nil:
				errs = append(errs, fmt.Sprintf("%s: deployment %s/%s is missing", member, namespace, name))
			case ptr.Deref(d.Spec.Replicas, 1) != n:
				errs = append(errs, fmt.Sprintf("%s: spec.replicas = %d, want %d", member, ptr.Deref(d.Spec.Replicas, 1), n))
			case d.Status.ReadyReplicas != n:
				errs = append(errs, fmt.Sprintf("%s: %d of %d replicas ready", member, d.Status.ReadyReplicas, n))
			case images[member] != "" && d.Spec.Template.Spec.Containers[0].Image != images[member]:
				errs = append(errs, fmt.Sprintf("%s: image %s, want %s", member, d.Spec.Template.Spec.Containers[0].Image, images[member]))
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("members disagree with the plan:\n  %s", strings.Join(errs, "\n  "))
		}
		return nil
	}
}

// waitReady waits until the Deployment in member has want ready replicas.
func (f *scenarioFleet) waitReady(t *testing.T, member, namespace, name string, want int32) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := f.deployment(ctx, member, namespace, name)
		switch {
		case err != nil:
			last = err.Error()
		case d == nil:
			last = "no deployment"
		default:
			last = fmt.Sprintf("%d of %d replicas ready", d.Status.ReadyReplicas, ptr.Deref(d.Spec.Replicas, 1))
			return d.Status.ReadyReplicas == want && ptr.Deref(d.Spec.Replicas, 1) == want, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s: deployment %s/%s: want %d ready replicas: %s", member, namespace, name, want, last)
	}
}

// expectService checks which members have the Service.
func (f *scenarioFleet) expectService(namespace, name string, in ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		want := map[string]bool{}
		for _, m := range in {
			want[m] = true
		}
		for _, member := range sortedKeys(f.clients) {
			_, err := f.clients[member].CoreV1().Services(namespace).Get(context.Background(), name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err) && want[member]:
				return fmt.Errorf("%s: service %s/%s is missing", member, namespace, name)
			case err == nil && !want[member]:
				return fmt.Errorf("%s: service %s/%s exists, want none", member, namespace, name)
			case err != nil && !apierrors.IsNotFound(err):
				return fmt.Errorf("get service %s/%s in %s: %w", namespace, name, member, err)
			}
		}
		return nil
	}
}

// expectNoDeployment is a CheckDestroy: destroy removed the Deployment from
// every member.
func (f *scenarioFleet) expectNoDeployment(namespace, name string) resource.TestCheckFunc {
	return f.expectDeployments(namespace, name, nil, nil)
}

// expectRenderedImage checks the first container's image in a cluster's
// rendered object.
func expectRenderedImage(addr, cluster, want string) plancheck.PlanCheck {
	return plancheck.ExpectKnownValue(addr, tfjsonpath.New("rendered").AtMapKey(cluster),
		jsonAt([]any{"spec", "template", "spec", "containers", 0, "image"}, knownvalue.StringExact(want)))
}

// jsonAt checks the field at path (map keys and slice indexes) of a JSON
// string value, as rendered holds each cluster's object.
func jsonAt(path []any, want knownvalue.Check) knownvalue.Check {
	return jsonField{path: path, want: want}
}

type jsonField struct {
	path []any
	want knownvalue.Check
}

func (c jsonField) CheckValue(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("expected a JSON string, got %T", v)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var cur any
	if err := dec.Decode(&cur); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	for _, step := range c.path {
		switch k := step.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("no field %q in %v", k, cur)
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return fmt.Errorf("no element %d in %v", k, cur)
			}
			cur = l[k]
		}
	}
	if err := c.want.CheckValue(cur); err != nil {
		return fmt.Errorf("%v: %w", c.path, err)
	}
	return nil
}

func (c jsonField) String() string { return fmt.Sprintf("%v: %s", c.path, c.want) }
