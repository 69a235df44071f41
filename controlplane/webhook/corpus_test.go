package webhook_test

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/host-outcomes.txt")

// corpusDir is the bad-input corpus shared with preview's tests.
const corpusDir = "../../testdata/badinput"

// karmadaGroups maps Karmada's API groups to flotilla's, as a user moving
// Karmada YAML to flotilla's host would rewrite them.
var karmadaGroups = map[string]string{
	"cluster.karmada.io": "cluster.flotilla.io",
	"policy.karmada.io":  "policy.flotilla.io",
	"work.karmada.io":    "work.flotilla.io",
}

// fieldPath finds the field path a corpus "# want:" line names, such as
// "spec.placement.spreadConstraints[0].maxGroups" in
// "spec.placement.spreadConstraints[0].maxGroups: Invalid value: ...".
var fieldPath = regexp.MustCompile(`([A-Za-z][A-Za-z0-9]*(\[[^\]]*\])?(\.[A-Za-z][A-Za-z0-9]*(\[[^\]]*\])?)*): (Invalid value|Required value|Unsupported value|Forbidden|Duplicate value|Too long)`)

// TestHostRefusesBadInputCorpus sends every corpus file to a real host
// apiserver with flotilla's CRDs and validating webhook, the way
// `kubectl apply -f` would (server-side dry run, strict field validation),
// and records each outcome in testdata/host-outcomes.txt:
//
//   - "client-side": the file is not YAML objects; kubectl refuses it
//     before anything reaches the host;
//   - "refused": the host refused one of its objects, with the message;
//   - "accepted": every object would be stored (duplicates in one file,
//     templates the host stores as they are).
//
// Every case whose "# want:" line names a field path of a Cluster or policy
// must be refused by the host with a message naming the same path. Run with
// -update after changing the corpus.
func TestHostRefusesBadInputCorpus(t *testing.T) {
	hub := startHost(t)
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil || len(paths) < 60 {
		t.Fatalf("corpus %s: %d files, %v", corpusDir, len(paths), err)
	}
	var golden bytes.Buffer
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		outcome, msg := sendToHost(t, hub, data)
		fmt.Fprintf(&golden, "%s: %s: %s\n", name, outcome, msg)

		first, _, _ := bytes.Cut(data, []byte("\n"))
		want, isWant := strings.CutPrefix(string(first), "# want: ")
		m := fieldPath.FindStringSubmatch(want)
		if !isWant || m == nil || !hostKind(data) {
			continue
		}
		path := m[1]
		if why, ok := notForHost[name]; ok {
			t.Logf("%s: not a host refusal: %s", name, why)
			continue
		}
		if strings.HasPrefix(path, "status.") {
			// A Cluster's status is the cluster status controller's to
			// write; a create through the host ignores it.
			continue
		}
		if w, ok := hostWording[name]; ok {
			path = w
		}
		if outcome != "refused" {
			t.Errorf("%s: the host %s it; preview refuses it at %s", name, outcome, path)
			continue
		}
		if !strings.Contains(msg, path) {
			t.Errorf("%s: the host's refusal does not name %s: %s", name, path, msg)
		}
	}
	goldenPath := filepath.Join("testdata", "host-outcomes.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := golden.String(); got != string(want) {
		t.Errorf("outcomes differ from %s (run with -update and review the diff):\n%s", goldenPath, lineDiff(string(want), got))
	}
}

// notForHost lists the cases preview refuses that the host cannot, and why.
var notForHost = map[string]string{
	"cpp-with-namespace.yaml": "the apiserver drops metadata.namespace of a cluster-scoped object, as it does for every kind",
}

// hostWording lists the cases where the host names the field in its own words.
var hostWording = map[string]string{
	"unknown-karmada-version.yaml": `in version "policy.flotilla.io/v1"`,
}

// hostKind reports whether the file holds a Karmada Cluster or policy, the
// kinds the host validates.
func hostKind(data []byte) bool {
	return regexp.MustCompile(`(?m)^apiVersion: (cluster|policy)\.karmada\.io/`).Match(data)
}

// sendToHost dry-runs each object of the file against the host and returns
// the outcome and, when refused, the host's message.
func sendToHost(t *testing.T, hub client.Client, data []byte) (outcome, msg string) {
	t.Helper()
	objs, err := objectsOf(data)
	if err != nil {
		return "client-side", oneLine(err.Error())
	}
	if len(objs) == 0 {
		return "client-side", "no objects"
	}
	for _, u := range objs {
		if gv := strings.SplitN(u.GetAPIVersion(), "/", 2); len(gv) == 2 {
			if g, ok := karmadaGroups[gv[0]]; ok {
				u.SetAPIVersion(g + "/" + gv[1])
			}
		}
		if namespaced, err := hub.IsObjectNamespaced(u); err == nil && namespaced && u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		if err := hub.Create(t.Context(), u, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
			return "refused", oneLine(err.Error())
		}
	}
	return "accepted", ""
}

// objectsOf splits a multi-document file into objects, as kubectl does
// before it sends anything: a document that is not a YAML mapping with
// apiVersion and kind is refused here. Lists are expanded.
func objectsOf(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict(doc, &m); err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("object has no apiVersion or kind")
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// lineDiff lists the lines of got that are not in want and the other way round.
func lineDiff(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
