package terraform

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// clusterResources and clusterDataSources are what provider.go is to list.
var (
	clusterResources   = []func() resource.Resource{newClusterResource}
	clusterDataSources = []func() datasource.DataSource{newClusterStatusDataSource}
)

// withClusterResources serves the real provider with flotilla_cluster and
// flotilla_cluster_status added to whatever it lists, skipping those it
// already lists; extra adds test-only resources. Once provider.go lists
// them, it serves exactly the real provider plus extra.
type withClusterResources struct {
	provider.Provider
	extra []func() resource.Resource
}

func (w withClusterResources) Resources(ctx context.Context) []func() resource.Resource {
	out := w.Provider.Resources(ctx)
	have := map[string]bool{}
	for _, f := range out {
		have[resourceTypeName(ctx, f())] = true
	}
	for _, f := range append(clusterResources, w.extra...) {
		if !have[resourceTypeName(ctx, f())] {
			out = append(out, f)
		}
	}
	return out
}

func (w withClusterResources) DataSources(ctx context.Context) []func() datasource.DataSource {
	out := w.Provider.DataSources(ctx)
	have := map[string]bool{}
	name := func(d datasource.DataSource) string {
		var resp datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "flotilla"}, &resp)
		return resp.TypeName
	}
	for _, f := range out {
		have[name(f())] = true
	}
	for _, f := range clusterDataSources {
		if !have[name(f())] {
			out = append(out, f)
		}
	}
	return out
}

func (w withClusterResources) Functions(ctx context.Context) []func() function.Function {
	if p, ok := w.Provider.(provider.ProviderWithFunctions); ok {
		return p.Functions(ctx)
	}
	return nil
}

// recordedDiag is one diagnostic the provider returned.
type recordedDiag struct {
	RPC      string
	Severity tfprotov6.DiagnosticSeverity
	Summary  string
	Detail   string
}

func (d recordedDiag) String() string {
	return fmt.Sprintf("%s %s: %s: %s", d.RPC, d.Severity, d.Summary, d.Detail)
}

// diagRecorder keeps every diagnostic the provider returns, so a test can
// assert warnings, which terraform-plugin-testing does not expose.
type diagRecorder struct {
	mu    sync.Mutex
	diags []recordedDiag
}

func (r *diagRecorder) add(rpc string, diags []*tfprotov6.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range diags {
		r.diags = append(r.diags, recordedDiag{RPC: rpc, Severity: d.Severity, Summary: d.Summary, Detail: d.Detail})
	}
}

// all returns the diagnostics recorded so far.
func (r *diagRecorder) all() []recordedDiag {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedDiag(nil), r.diags...)
}

// find returns the diagnostics of rpc and severity whose summary and
// detail, joined by ": ", match re.
func (r *diagRecorder) find(rpc string, severity tfprotov6.DiagnosticSeverity, re *regexp.Regexp) []recordedDiag {
	var out []recordedDiag
	for _, d := range r.all() {
		if d.RPC == rpc && d.Severity == severity && re.MatchString(d.Summary+": "+d.Detail) {
			out = append(out, d)
		}
	}
	return out
}

// recordingServer passes every call through and records the diagnostics
// of the calls that concern resources and data sources.
type recordingServer struct {
	tfprotov6.ProviderServer
	rec *diagRecorder
}

func (s recordingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	resp, err := s.ProviderServer.ValidateResourceConfig(ctx, req)
	if resp != nil {
		s.rec.add("ValidateResourceConfig", resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil {
		s.rec.add("ReadResource", resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.rec.add("PlanResourceChange", resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.add("ApplyResourceChange", resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	resp, err := s.ProviderServer.ImportResourceState(ctx, req)
	if resp != nil {
		s.rec.add("ImportResourceState", resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	resp, err := s.ProviderServer.ReadDataSource(ctx, req)
	if resp != nil {
		s.rec.add("ReadDataSource", resp.Diagnostics)
	}
	return resp, err
}

// clusterTestProviders serves the provider with the cluster resources (and
// extra test-only resources) added, recording its diagnostics in rec.
func clusterTestProviders(rec *diagRecorder, extra ...func() resource.Resource) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"flotilla": func() (tfprotov6.ProviderServer, error) {
			s, err := providerserver.NewProtocol6WithError(withClusterResources{Provider: New("test")(), extra: extra})()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: s, rec: rec}, nil
		},
	}
}

// startMembers starts n API-server-only member clusters and writes a
// kubeconfig with a context per member (member1 …).
func startMembers(t *testing.T, n int) (*testenv.Fleet, string) {
	t.Helper()
	f := testenv.Start(t, testenv.Options{Clusters: n, Mode: testenv.APIServerOnly})
	return f, f.TestKubeconfig(t)
}

// marker is what the membership marker in a member records, read with
// client-go rather than through flotilla.
type marker struct {
	Found         bool
	Fleet, Member string
	Facts         string
}

func readMarker(t *testing.T, c *testenv.Cluster) marker {
	t.Helper()
	client := c.Clientset(t)
	cm, err := client.CoreV1().ConfigMaps(member.MembershipNamespace).Get(context.Background(), member.MembershipName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return marker{}
	}
	if err != nil {
		t.Fatalf("read the membership marker of %s: %v", c.Name, err)
	}
	return marker{Found: true, Fleet: cm.Data[member.MembershipFleetKey], Member: cm.Data[member.MembershipMemberKey],
		Facts: cm.Annotations[member.MembershipFactsAnnotation]}
}

// expectMarker returns a check that the member's marker records want.
func expectMarker(t *testing.T, c *testenv.Cluster, want marker) tfresource.TestCheckFunc {
	return func(*terraform.State) error {
		got := readMarker(t, c)
		if want.Facts == "" {
			got.Facts = ""
		}
		if got != want {
			return fmt.Errorf("membership marker of %s = %+v, want %+v", c.Name, got, want)
		}
		return nil
	}
}

// writeExecPlugin writes a credential plugin that prints an ExecCredential
// with the member's token, passed in its environment.
func writeExecPlugin(t *testing.T) string {
	t.Helper()
	plugin := filepath.Join(t.TempDir(), "token-plugin")
	script := "#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"," +
		"\"status\":{\"token\":\"%s\"}}\\n' \"$MEMBER_TOKEN\"\n"
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return plugin
}

// readLogs returns the contents of every file in dir.
func readLogs(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// hclHeredoc returns s as an HCL heredoc, for PEM and kubeconfig contents.
func hclHeredoc(s string) string {
	return "<<-EOT\n" + strings.TrimRight(s, "\n") + "\nEOT\n"
}
