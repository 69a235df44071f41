package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestReporterWithoutReportSpace: an agent registered before `register`
// made report spaces (here: the RoleBinding of its report space removed;
// the space's namespace is kept, as the host runs no namespace controller
// to finish deleting it, and a missing namespace is refused the same
// Forbidden) is told, by its identity's Forbidden,
// exactly what to run, naming the cluster and the space; running it
// (RegisterAgent again) lets the same token report, with no new identity.
func TestReporterWithoutReportSpace(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	hub := controllertest.SystemHost(t, host)
	ctx := t.Context()
	reg, err := RegisterAgent(ctx, hub, "edge", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	space := shared.ReportNamespace("edge")
	if err := hub.Delete(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: space, Name: agentRoleName("edge")}}); err != nil {
		t.Fatal(err)
	}
	agentHub := controllertest.Client(t, &rest.Config{Host: host.Host, BearerToken: reg.Token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}}, hub.Scheme())
	r := &reporter{hub: agentHub, reader: agentHub, cluster: "edge"}
	err = r.report(ctx)
	for _, want := range []string{"run `terraform-provider-flotilla register --cluster-name edge`", "into " + space, "forbidden"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("report without a report space: %v; want an error containing %q", err, want)
		}
	}
	t.Log("registering again, as the error says, lets the same identity report")
	if _, err := RegisterAgent(ctx, hub, "edge", time.Hour); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the agent's token reports into its space", func() (bool, string) {
		err := r.report(ctx)
		return err == nil, fmt.Sprint("report: ", err)
	})
}
