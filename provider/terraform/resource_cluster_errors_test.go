package terraform

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// testCA is PEM-framed bytes; the cases that use it fail before parsing it.
const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"

// clusterErrorCase is a flotilla_cluster configuration that must fail to
// plan. want is matched with any whitespace between words (terraform wraps
// long diagnostics); source, when set, is the configuration line terraform
// quotes for the diagnostic, which shows it was attached to that attribute.
// (For an attribute nested in an object, terraform quotes the resource's
// first line instead, so the detail names the attribute path itself.)
type clusterErrorCase struct {
	name   string
	body   string
	want   string
	source string
}

var clusterErrorCases = []clusterErrorCase{
	{
		name: "no connection",
		body: `region = "us-east-1"`,
		want: `Cluster "east" has no way to connect: set kubeconfig = { path or raw, and optionally context }, or host with one of token, client_certificate and client_key, or exec.`,
	},
	{
		name: "pull sync mode",
		body: `kubeconfig = { path = "~/.kube/config" }
		sync_mode = "Pull"`,
		want:   `Attribute sync_mode of cluster "east": Pull is not supported by Terraform, which has no hub for an agent to pull from; a member Terraform cannot reach is served by the continuous control plane (terraform-provider-flotilla controlplane) with a Cluster of syncMode Pull and terraform-provider-flotilla agent in the member (docs/guides/pull-mode.md).`,
		source: `sync_mode = "Pull"`,
	},
	{
		name: "kubeconfig and host",
		body: `kubeconfig = { path = "~/.kube/config" }
		host = "https://10.0.0.1:6443"
		token = "t"`,
		want:   `Attribute host of cluster "east": cannot be combined with kubeconfig: set exactly one of kubeconfig or host.`,
		source: `host = "https://10.0.0.1:6443"`,
	},
	{
		name: "kubeconfig with path and raw",
		body: `kubeconfig = { path = "~/.kube/config", raw = "apiVersion: v1" }`,
		want: `Attribute kubeconfig.raw of cluster "east": cannot be combined with kubeconfig.path: set exactly one of path or raw.`,
	},
	{
		name: "kubeconfig with neither path nor raw",
		body: `kubeconfig = { context = "kind-east" }`,
		want: `Attribute kubeconfig of cluster "east": needs exactly one of path (a kubeconfig file) or raw (its contents).`,
	},
	{
		name: "kubeconfig with a token",
		body: `kubeconfig = { path = "~/.kube/config" }
		token = "t"`,
		want:   `Attribute token of cluster "east": is only used with host; with kubeconfig, the kubeconfig holds the credentials and the CA.`,
		source: `token = "t"`,
	},
	{
		name:   "host without credentials",
		body:   `host = "https://10.0.0.1:6443"`,
		want:   `Attribute host of cluster "east": needs credentials: set one of token, client_certificate with client_key, or exec.`,
		source: `host = "https://10.0.0.1:6443"`,
	},
	{
		name:   "plain http host",
		body:   `host = "http://10.0.0.1:8080"` + "\n" + `token = "t"`,
		want:   `Attribute host of cluster "east": must use https: plain http would send the credentials in the clear.`,
		source: `host = "http://10.0.0.1:8080"`,
	},
	{
		name: "insecure with a CA",
		body: `host = "https://10.0.0.1:6443"
		token = "t"
		insecure = true
		cluster_ca_certificate = ` + hclHeredoc(testCA),
		want:   `Attribute insecure of cluster "east": cannot be combined with cluster_ca_certificate: either verify the server with the CA or, explicitly, not at all.`,
		source: `insecure = true`,
	},
	{
		name: "token and exec",
		body: `host = "https://10.0.0.1:6443"
		token = "t"
		exec = { command = "aws" }`,
		want:   `Attribute exec of cluster "east": cannot be combined with token: set exactly one of token, client_certificate with client_key, or exec.`,
		source: `exec = { command = "aws" }`,
	},
	{
		name: "exec without command",
		body: `host = "https://10.0.0.1:6443"
		exec = { args = ["eks", "get-token"] }`,
		want: `Inappropriate value for attribute "exec": attribute "command" is required.`,
	},
	{
		name: "exec with an unknown API version",
		body: `host = "https://10.0.0.1:6443"
		exec = { command = "aws", api_version = "client.authentication.k8s.io/v1alpha1" }`,
		want: `Attribute exec.api_version of cluster "east": must be client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1, got "client.authentication.k8s.io/v1alpha1".`,
	},
	{
		name: "client certificate without key",
		body: `host = "https://10.0.0.1:6443"
		client_certificate = ` + hclHeredoc(testCA),
		want: `Attribute client_key of cluster "east": is required with client_certificate.`,
	},
	{
		name: "inline kubeconfig without the context",
		body: `kubeconfig = {
		  raw = jsonencode({ apiVersion = "v1", kind = "Config", contexts = [{ name = "a", context = { cluster = "a", user = "a" } }], clusters = [], users = [] })
		  context = "kind-east"
		}`,
		want: `Attribute kubeconfig.context of cluster "east": "kind-east" is not in the kubeconfig, which has contexts "a".`,
	},
	{
		name:   "proxy with an unsupported scheme",
		body:   `kubeconfig = { path = "~/.kube/config" }` + "\n" + `proxy_url = "ftp://user:hunter2-proxy-password@proxy:21"`,
		want:   `Attribute proxy_url of cluster "east": must use http, https or socks5, got ftp://user:xxxxx@proxy:21.`,
		source: `proxy_url`,
	},
	{
		name: "bad taint effect",
		body: `kubeconfig = { path = "~/.kube/config" }
		taints = [{ key = "dedicated", effect = "NoSchedule" }, { key = "gpu", effect = "Sometimes" }]`,
		want: `Attribute taints[1].effect of cluster "east": Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute".`,
	},
	{
		name: "duplicate taint",
		body: `kubeconfig = { path = "~/.kube/config" }
		taints = [{ key = "gpu", effect = "NoSchedule" }, { key = "gpu", value = "a100", effect = "NoSchedule" }]`,
		want: `Attribute taints[1] of cluster "east": Duplicate value: "gpu:NoSchedule".`,
	},
	{
		name: "bad label key",
		body: `kubeconfig = { path = "~/.kube/config" }
		labels = { "tier prod" = "x" }`,
		want: `Attribute labels of cluster "east": Invalid value: "tier prod": name part must consist of alphanumeric characters`,
	},
	{
		name: "empty region",
		body: `kubeconfig = { path = "~/.kube/config" }
		region = ""`,
		want: `Attribute region string length must be at least 1, got: 0`,
	},
}

// TestClusterBadInput plans each invalid configuration with the real
// terraform and checks the diagnostic names the attribute and the cluster.
// Nothing here reaches a cluster: validation needs none.
func TestClusterBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range clusterErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := wrappedMessage(tc.want).String()
			if tc.source != "" {
				// terraform quotes the attribute's line ("  6:   insecure = true")
				// before the detail.
				want = `(?s)` + regexp.QuoteMeta(tc.source) + `.*` + want
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
				Steps: []resource.TestStep{{
					Config:      clusterConfig(clusterBlock("east", "  "+strings.ReplaceAll(tc.body, "\n\t\t", "\n  "))),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(want),
				}},
			})
		})
	}
}

// TestClusterBadName checks the name, which every other case gets right.
func TestClusterBadName(t *testing.T) {
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
		Steps: []resource.TestStep{{
			Config: clusterConfig(`resource "flotilla_cluster" "east" {
  name       = "East_1"
  kubeconfig = { path = "~/.kube/config" }
}`),
			PlanOnly:    true,
			ExpectError: wrappedMessage(`Attribute name: "East_1" is not a valid cluster name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`),
		}},
	})
}

// providerLogs drops the entries of terraform-plugin-testing itself
// (sdk.helper_resource), which quote the test's configuration, secrets and
// all, from a log; an entry runs until the next line with a timestamp.
func providerLogs(log string) string {
	var b strings.Builder
	keep := true
	for line := range strings.Lines(log) {
		if m := logEntryRE.FindStringSubmatch(line); m != nil {
			keep = m[1] != "sdk.helper_resource"
		}
		if keep {
			b.WriteString(line)
		}
	}
	return b.String()
}

var logEntryRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z \[[A-Z]+\] +([A-Za-z0-9_.]+):`)

// TestClusterCredentialsStayOut creates a cluster whose host does not
// answer, with a known token, proxy password and plugin environment value,
// and checks that none of them appears in any diagnostic or in the
// provider's logs, at TRACE.
func TestClusterCredentialsStayOut(t *testing.T) {
	logs := t.TempDir()
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_LOG_PATH_MASK", logs+"/%s.log")
	const (
		token    = "flotilla-test-token-3a7f09c2e1d54b68"
		password = "flotilla-proxy-password-9c41e0"
		envValue = "flotilla-plugin-secret-77d2b1"
	)
	secrets := []string{token, password, envValue}
	host := "https://" + testkit.FreeAddr(t)
	config := func(body string) string {
		return clusterConfig(clusterBlock("east", fmt.Sprintf("  host = %q\n  insecure = true\n%s", host, body)))
	}
	rec := &diagRecorder{}
	var errs []string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(rec),
		ErrorCheck: func(err error) error {
			errs = append(errs, err.Error())
			if !wrappedMessage("cluster east is not connected").MatchString(err.Error()) {
				return err
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf("  token = %q\n  proxy_url = \"http://user:%s@%s\"", token, password, testkit.FreeAddr(t))),
				Check:  func(*terraform.State) error { return fmt.Errorf("apply against a closed port succeeded") },
			},
			{
				Config: config(fmt.Sprintf("  exec = {\n    command = \"/bin/false\"\n    env = { SECRET = %q }\n  }", envValue)),
				Check:  func(*terraform.State) error { return fmt.Errorf("apply against a closed port succeeded") },
			},
		},
	})
	if len(errs) != 2 {
		t.Fatalf("want two failed applies, got %d: %q", len(errs), errs)
	}
	failures := rec.find("ApplyResourceChange", tfprotov6.DiagnosticSeverityError, regexp.MustCompile(`^Cannot reach cluster east: cluster east is not connected`))
	if len(failures) != 2 {
		t.Errorf("want two \"Cannot reach cluster east\" errors, got %v", rec.all())
	}
	logged := providerLogs(readLogs(t, logs))
	for _, want := range []string{
		"cluster east is not connected", // the framework logs the diagnostic
		`connection="host ` + host + ` with token, insecure, proxy http://user:xxxxx@`, // flotilla's own line
	} {
		if !strings.Contains(logged, want) {
			t.Errorf("the provider's logs in %s do not hold %q; is logging to TF_LOG_PATH_MASK working?", logs, want)
		}
	}
	for _, s := range secrets {
		for _, e := range errs {
			if strings.Contains(e, s) {
				t.Errorf("terraform's error output holds the secret %q:\n%s", s, e)
			}
		}
		for _, d := range rec.all() {
			if strings.Contains(d.String(), s) {
				t.Errorf("a diagnostic holds the secret %q: %s", s, d)
			}
		}
		if strings.Contains(logged, s) {
			t.Errorf("the provider's logs hold the secret %q", s)
		}
	}
}
