package terraform

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccManifestCredentialsStayOut: flotilla_manifest carries every
// cluster's connection in its clusters attribute. A full create, update and
// destroy at TRACE must not write a member's token to the provider's logs,
// and a failed plan against an unreachable member must not show it either.
func TestAccManifestCredentialsStayOut(t *testing.T) {
	logs := t.TempDir()
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_LOG_PATH_MASK", logs+"/%s.log")
	m := startFleet(t, "east", "west")
	token := m.byName["east"].Token
	var errs []string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		ErrorCheck: func(err error) error {
			errs = append(errs, err.Error())
			return err
		},
		Steps: []resource.TestStep{
			{Config: m.webConfig(1, 2, "nginx:1.27")},
			{Config: m.webConfig(2, 1, "nginx:1.28")},
		},
	})
	logged := pluginLogs(readLogs(t, logs))
	if !strings.Contains(logged, "planned manifest") {
		t.Fatalf("the provider's logs in %s lack flotilla's own lines; is logging to TF_LOG_PATH_MASK working?", logs)
	}
	if strings.Contains(logged, token) {
		for line := range strings.Lines(logged) {
			if strings.Contains(line, token) {
				t.Errorf("a provider log line holds the member's token: %.300s", line)
				break
			}
		}
	}
	for _, e := range errs {
		if strings.Contains(e, token) {
			t.Errorf("terraform's error output holds the member's token:\n%s", e)
		}
	}
}

// pluginLogs keeps the lines the provider writes: its own (logger
// "flotilla" in tests, "provider..." when Terraform starts it) and the plugin SDK's (sdk.framework, sdk.proto). Terraform
// core's lines are left out: core logs resource state, which holds the
// connection as the state file does.
func pluginLogs(log string) string {
	var b strings.Builder
	keep := false
	for line := range strings.Lines(log) {
		if m := logEntryRE.FindStringSubmatch(line); m != nil {
			name := m[1]
			keep = name == "flotilla" || strings.HasPrefix(name, "provider") || name == "sdk.framework" || name == "sdk.proto"
		}
		if keep {
			b.WriteString(line)
		}
	}
	return b.String()
}
