package terraform

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// corpusDir is the bad-input corpus shared with preview's tests and the host
// apiserver's (controlplane/webhook); its first lines say what to expect.
const corpusDir = "../../testdata/badinput"

// notThroughImport lists the "# want:" cases that importing a policy from
// the file does not refuse the way preview does, and why.
var notThroughImport = map[string]string{
	"empty.yaml":           "import looks for the named policy: an empty file answers \"there is no PropagationPolicy\"",
	"only-separators.yaml": "import looks for the named policy: a file of separators answers \"there is no PropagationPolicy\"",
}

// TestImportBadInputCorpus runs every refused corpus case through the real
// terraform: `terraform import` of a flotilla_propagation_policy from the
// file, the way a Karmada user brings existing YAML. The provider must refuse
// it with the same message preview gives, naming the file, the object and
// the field, and leave no state behind (terraform-plugin-testing checks the
// import produced nothing when it fails).
func TestImportBadInputCorpus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil || len(paths) < 60 {
		t.Fatalf("corpus %s: %d files, %v", corpusDir, len(paths), err)
	}
	const config = `resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
}
`
	ran := 0
	for _, p := range paths {
		name := filepath.Base(p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := bytes.Cut(data, []byte("\n"))
		want, ok := strings.CutPrefix(string(first), "# want: ")
		if !ok {
			continue
		}
		if why, skip := notThroughImport[name]; skip {
			t.Logf("%s: %s", name, why)
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		ran++
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: policyTestProviders,
				Steps: []resource.TestStep{{
					Config:       config,
					ResourceName: "flotilla_propagation_policy.web",
					ImportState:  true,
					// The case's own working directory: no second
					// terraform init for the import, and the state that must
					// stay empty is the case's.
					ImportStatePersist: true,
					ImportStateId:      abs + ":default/web",
					ExpectError:        wrappedMessage(want),
				}},
			})
		})
	}
	if ran < 60 {
		t.Errorf("only %d corpus cases ran through terraform import; issue 9 asks for at least 60", ran)
	}
}
