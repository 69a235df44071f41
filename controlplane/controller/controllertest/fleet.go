package controllertest

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Fleet is a host apiserver and member apiservers (APIServerOnly), with
// flotilla's CRDs and system namespace on the host and every member
// registered as a Cluster; no control plane runs until StartControlPlane.
type Fleet struct {
	Host *testenv.Cluster
	Hub  client.Client
	// Members are clients of the members, by cluster name.
	Members map[string]client.Client
	// Clusters are the members' processes, for fault tests.
	Clusters []*testenv.Cluster
	// Names are the members' names in order.
	Names  []string
	Scheme *runtime.Scheme
}

// StartFleet starts a host and n members and registers the members.
func StartFleet(t testing.TB, n int) Fleet {
	t.Helper()
	return StartFleetWith(t, testenv.Options{Clusters: 1 + n})
}

// StartFleetWith is StartFleet with the test environment's options (its
// Clusters count the host; the mode is always APIServerOnly), for a large
// fleet that needs longer than the default Timeout to start.
func StartFleetWith(t testing.TB, opts testenv.Options) Fleet {
	t.Helper()
	opts.Mode = testenv.APIServerOnly
	fleet := testenv.Start(t, opts)
	host, members := fleet.Clusters[0], fleet.Clusters[1:]
	f := Fleet{Host: host, Hub: SystemHost(t, host), Clusters: members, Scheme: Scheme(t)}
	for _, m := range members {
		RegisterMember(t, f.Hub, m)
	}
	f.Members, f.Names = MemberClients(t, members, f.Scheme)
	return f
}

// StartControlPlane runs the reconcilers over the host with Options("test"),
// changed by configure, until the returned stop is called or the test ends.
func (f Fleet) StartControlPlane(t testing.TB, configure ...func(*shared.Options)) (stop func()) {
	t.Helper()
	opts := Options("test")
	for _, c := range configure {
		c(&opts)
	}
	return StartManager(t, f.Host.RESTConfig(), ctrl.Options{Client: shared.ClientOptions(), Scheme: Scheme(t)}, SetupControlPlane(opts))
}

// StartRunning starts a host and n members (StartFleet) and runs the
// control plane over them with Options("test") (StartControlPlane) until
// the test ends: the start of most integration tests.
func StartRunning(t testing.TB, n int) Fleet {
	t.Helper()
	f := StartFleet(t, n)
	f.StartControlPlane(t)
	return f
}

// StartMetricsFleet is StartFleet with Full members of one node each that
// serve the metrics.k8s.io API from the pinned metrics-server
// (testenv.Options.MetricsServer): a pod's usage is its
// testenv.UsageCPUAnnotation. The host stays APIServerOnly. Without the
// pinned metrics-server the test is skipped, except in CI.
func StartMetricsFleet(t testing.TB, n int) Fleet {
	t.Helper()
	return startMetricsFleet(t, testenv.Options{Clusters: n, MetricsServer: testkit.MetricsServer(t, moduleRoot(t))})
}

// StartCustomMetricsFleet is StartMetricsFleet whose members also serve
// custom.metrics.k8s.io and external.metrics.k8s.io from the pinned
// custom metrics adapter (testenv.Options.CustomMetricsAdapter): a
// custom metric's value is what the test writes with
// testenv.Cluster.WriteCustomMetric. Without the pinned tools the test
// is skipped, except in CI.
func StartCustomMetricsFleet(t testing.TB, n int) Fleet {
	t.Helper()
	root := moduleRoot(t)
	return startMetricsFleet(t, testenv.Options{Clusters: n, MetricsServer: testkit.MetricsServer(t, root),
		CustomMetricsAdapter: testkit.CustomMetricsAdapter(t, root)})
}

func startMetricsFleet(t testing.TB, opts testenv.Options) Fleet {
	t.Helper()
	hostEnv := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "host"})
	membersEnv := testenv.Start(t, opts)
	host, members := hostEnv.Clusters[0], membersEnv.Clusters
	f := Fleet{Host: host, Hub: SystemHost(t, host), Clusters: members, Scheme: Scheme(t)}
	for _, m := range members {
		RegisterMember(t, f.Hub, m)
	}
	f.Members, f.Names = MemberClients(t, members, f.Scheme)
	return f
}

// moduleRoot is the directory of the module's go.mod, above the test's
// working directory.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
