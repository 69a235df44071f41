// Package cli holds flotilla's command-line front ends, such as `preview`.
// Like the Terraform provider, it is a thin adapter over controlplane: it
// reads input, calls the engine and prints; it makes no decisions.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// Exit codes of `preview`.
const (
	ExitOK            = 0
	ExitUnschedulable = 1
	ExitBadInput      = 2
)

// PreviewOutput is the documented, stable JSON shape of `preview -o json`.
type PreviewOutput struct {
	Results []PreviewResult `json:"results"`
	// Error is set when the input could not be read or decoded; Results is then empty.
	Error string `json:"error,omitempty"`
}

// PreviewResult is the plan for one template.
type PreviewResult struct {
	Template     PreviewObject      `json:"template"`
	Policy       *plan.PolicyRef    `json:"policy"`
	AffinityTerm string             `json:"affinityTerm"`
	Placement    []PreviewPlacement `json:"placement"`
	// Components are the template's components when its kind's
	// customization scripts componentResource: the template is placed
	// whole, and each cluster of Placement runs every component.
	Components []api.Component           `json:"components,omitempty"`
	Rendered   map[string]map[string]any `json:"rendered"`
	RequiredBy []PreviewObject           `json:"requiredBy,omitempty"`
	Error      string                    `json:"error"`
	// Refused is true when Error is a claiming policy's field that a
	// preview cannot honour (schedulerName, dependentOverrides), or the
	// template is a kind only continuous mode acts on (FederatedHPA,
	// CronFederatedHPA).
	Refused bool `json:"refused,omitempty"`
	// Reasons says, per cluster, why it was not chosen, or, for a chosen
	// cluster whose resource models (its nodes counted by grade) hold
	// fewer replicas than its summed free resources, both figures.
	Reasons map[string]string `json:"reasons"`
	// Rollout is the claiming policy's staged rollout as assigned to the
	// placed clusters; absent without one.
	Rollout *PreviewRollout `json:"rollout,omitempty"`
	// Services names the exporting or consuming clusters of a
	// ServiceExport or ServiceImport; absent for other kinds.
	Services *PreviewServices `json:"services,omitempty"`
}

// PreviewObject names a template in the JSON output, with its apiVersion
// as written in a manifest.
type PreviewObject struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// previewObject is ref in the JSON output's shape.
func previewObject(ref api.TemplateRef) PreviewObject {
	return PreviewObject{APIVersion: ref.APIVersion(), Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

// String names the template in the table output: "Deployment default/web".
func (o PreviewObject) String() string {
	return api.TemplateRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}.Describe()
}

// PreviewPlacement is one cluster of a placement.
type PreviewPlacement struct {
	Cluster  string `json:"cluster"`
	Replicas int32  `json:"replicas"`
	// Suspended is true when the claiming policy's suspension holds
	// dispatch to this cluster back: it is scheduled and rendered, and
	// nothing reaches it until the suspension is lifted.
	Suspended bool `json:"suspended,omitempty"`
}

// Preview runs `terraform-provider-flotilla preview` with args and returns the exit code.
func Preview(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files stringList
	fs.Var(&files, "f", "a YAML/JSON `file` or directory of them (repeatable; - reads stdin)")
	output := fs.String("o", "table", "output format: table or json")
	recursive := fs.Bool("R", false, "descend into subdirectories of -f directories")
	fleet := fs.String("fleet", "default", "fleet name written into the ownership labels of rendered objects")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: terraform-provider-flotilla preview -f FILE|DIR [-f ...] [-o json|table]\n\n"+
			"Dry-runs Karmada YAML (Cluster, PropagationPolicy, ClusterPropagationPolicy, OverridePolicy,\n"+
			"ClusterOverridePolicy, ResourceBinding, ResourceInterpreterCustomization) and resource templates: prints per template the claiming\n"+
			"policy, the placement and the rendered manifest per cluster. Needs no cluster.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, ExitBadInput)
	}
	if *output != "json" && *output != "table" {
		fmt.Fprintf(stderr, "preview: -o must be json or table, got %q\n", *output)
		return ExitBadInput
	}
	fail := func(err error) int {
		if *output == "json" {
			writeJSON(stdout, PreviewOutput{Results: []PreviewResult{}, Error: err.Error()})
		}
		fmt.Fprintf(stderr, "preview: %v\n", err)
		return ExitBadInput
	}
	if len(files) == 0 || fs.NArg() > 0 {
		return fail(errors.New("give one or more -f FILE|DIR and no other arguments"))
	}
	bundle, err := readBundle(files, *recursive, stdin)
	if err == nil && len(bundle.Origins) == 0 {
		err = fmt.Errorf("no objects in %s", strings.Join(files, ", "))
	}
	if err == nil {
		// Objects that name no namespace land in "default", as with kubectl's default context.
		err = bundle.DefaultTemplateNamespaces(api.DefaultNamespace)
	}
	if err != nil {
		return fail(err)
	}
	f := plan.FleetFromBundle(*fleet, bundle)
	if f.Interpreter, err = interpret.New(bundle.Interpreters); err != nil {
		return fail(err)
	}
	results := plan.Plan(f, bundle.Templates)
	out := PreviewOutput{Results: make([]PreviewResult, 0, len(results))}
	code, continuousOnly, mcsOnly, refusedField := ExitOK, false, false, false
	for _, r := range results {
		pr, err := toPreview(r)
		if err != nil {
			return fail(err)
		}
		if refuseAutoscaling(&pr) {
			continuousOnly = true
		} else if refuseMultiClusterService(&pr) {
			mcsOnly = true
		} else if pr.Refused {
			refusedField = true
		}
		switch {
		case pr.Refused:
			code = ExitBadInput
		case pr.Error != "" && code == ExitOK:
			code = ExitUnschedulable
		}
		out.Results = append(out.Results, pr)
	}
	if *output == "json" {
		writeJSON(stdout, out)
	} else {
		writeTable(stdout, out)
	}
	if continuousOnly {
		fmt.Fprintln(stderr, "preview: FederatedHPA and CronFederatedHPA act only in continuous mode; see the templates' error")
	}
	if mcsOnly {
		fmt.Fprintln(stderr, "preview: MultiClusterService acts only in continuous mode; see the template's error")
	}
	switch {
	case refusedField:
		fmt.Fprintln(stderr, "preview: a claiming policy sets a field a preview cannot honour; see the templates' error")
	case code == ExitUnschedulable:
		fmt.Fprintln(stderr, "preview: some templates could not be scheduled; see their error and reasons")
	}
	return code
}

func toPreview(r plan.Result) (PreviewResult, error) {
	pr := PreviewResult{
		Template: previewObject(r.Template), Policy: r.Policy, AffinityTerm: r.AffinityTerm,
		Placement: []PreviewPlacement{}, Rendered: map[string]map[string]any{},
		Reasons: r.Reasons, Components: r.Components,
	}
	for _, ref := range r.RequiredBy {
		pr.RequiredBy = append(pr.RequiredBy, previewObject(ref))
	}
	if pr.Reasons == nil {
		pr.Reasons = map[string]string{}
	}
	for _, l := range r.NodeLimited {
		pr.Reasons[l.Cluster] = l.String()
	}
	if r.Err != nil {
		pr.Error = r.Err.Error()
		var refused *plan.RefusedFieldError
		pr.Refused = errors.As(r.Err, &refused)
	}
	for _, tc := range r.Placement {
		pr.Placement = append(pr.Placement, PreviewPlacement{Cluster: tc.Name, Replicas: tc.Replicas, Suspended: slices.Contains(r.Suspended, tc.Name)})
	}
	for cluster, w := range r.Works {
		pr.Rendered[cluster] = w.Object.Object
	}
	pr.Rollout = previewRollout(r)
	pr.Services = previewServices(r)
	return pr, nil
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeTable(w io.Writer, out PreviewOutput) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tPOLICY\tTERM\tPLACEMENT\tSTATUS")
	for _, r := range out.Results {
		policy, term, status := "-", r.AffinityTerm, "ok"
		if r.Policy != nil {
			policy = r.Policy.String()
		}
		if term == "" {
			term = "-"
		}
		parts := make([]string, 0, len(r.Placement))
		for _, p := range r.Placement {
			held := ""
			if p.Suspended {
				held = "(suspended)"
			}
			parts = append(parts, placementCell(p, r.Components)+held)
		}
		placement := strings.Join(parts, ",")
		switch {
		case r.Refused:
			status = "refused"
		case r.Error != "":
			status = "unschedulable"
		case r.Policy == nil && len(r.RequiredBy) == 0:
			status, placement = "not claimed", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Template, policy, term, placement, status)
	}
	_ = tw.Flush()
	for _, r := range out.Results {
		if r.Error != "" {
			fmt.Fprintf(w, "\n# %s: %s\n", r.Template, r.Error)
			continue
		}
		writeRollout(w, r)
		writeServices(w, r)
		clusters := make([]string, 0, len(r.Rendered))
		for c := range r.Rendered {
			clusters = append(clusters, c)
		}
		sort.Strings(clusters)
		for _, c := range clusters {
			b, _ := json.MarshalIndent(r.Rendered[c], "", "  ")
			held := ""
			if slices.ContainsFunc(r.Placement, func(p PreviewPlacement) bool { return p.Cluster == c && p.Suspended }) {
				held = " (dispatch suspended: not applied until the suspension is lifted)"
			}
			fmt.Fprintf(w, "\n# %s -> %s%s\n%s\n", r.Template, c, held, b)
		}
	}
}

// placementCell is one cluster's entry in the table's PLACEMENT column:
// cluster=replicas, or, for a template placed whole by its components,
// the cluster with every component it runs there, since its replica
// count (0) says nothing of what the cluster receives.
func placementCell(p PreviewPlacement, components []api.Component) string {
	if len(components) == 0 {
		return fmt.Sprintf("%s=%d", p.Cluster, p.Replicas)
	}
	each := make([]string, 0, len(components))
	for _, c := range components {
		each = append(each, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
	}
	return p.Cluster + "[" + strings.Join(each, ",") + "]"
}

// readBundle decodes every -f argument, in order, into one bundle.
func readBundle(args []string, recursive bool, stdin io.Reader) (*api.Bundle, error) {
	bundle := &api.Bundle{}
	for _, arg := range args {
		paths, err := expand(arg, recursive)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			var data []byte
			if p == "-" {
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(p)
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", p, err)
			}
			b, err := api.Decode(p, data)
			if err != nil {
				return nil, err
			}
			if err := bundle.Merge(b); err != nil {
				return nil, err
			}
		}
	}
	return bundle, nil
}

// expand turns a -f argument into files: a file as is, a directory into its
// .yaml, .yml and .json files in lexical order.
func expand(arg string, recursive bool) ([]string, error) {
	if arg == "-" {
		return []string{"-"}, nil
	}
	info, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", arg, err)
	}
	if !info.IsDir() {
		return []string{arg}, nil
	}
	var out []string
	err = filepath.WalkDir(arg, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != arg && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", arg, err)
	}
	return out, nil
}

// stringList is a flag that may be given more than once.
type stringList []string

// String implements flag.Value.
func (s *stringList) String() string { return strings.Join(*s, ",") }

// Set implements flag.Value: each use of the flag adds one value.
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
