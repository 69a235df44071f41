package crd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
)

// LabelInstalledBy marks a CRD the control plane installed (value
// InstalledByFlotilla). It is how a control plane in Karmada's groups
// tells its own CRDs from those of a Karmada installation: a CRD of
// Karmada's groups without it belongs to Karmada (RefuseForeign).
const LabelInstalledBy = "flotilla.io/installed-by"

// InstalledByFlotilla is LabelInstalledBy's value.
const InstalledByFlotilla = "flotilla"

// inGroups rewrites the generated definitions (flotilla's groups, as
// controller-gen writes them) into g's groups: the group, the CRD's name
// (<plural>.<group>) and, where g serves a kind at another version
// (Karmada's bindings at v1alpha2), the version. The schema is the same:
// the Go types are. Every definition gets LabelInstalledBy.
func inGroups(defs []*unstructured.Unstructured, g apis.Groups) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(defs))
	for _, d := range defs {
		d = d.DeepCopy()
		group, _, _ := unstructured.NestedString(d.Object, "spec", "group")
		name, ok := strings.CutSuffix(group, "."+apis.FlotillaGroups.Domain())
		if !ok {
			return nil, fmt.Errorf("embedded crd %s: group %q is not one of flotilla's", d.GetName(), group)
		}
		plural, _, _ := unstructured.NestedString(d.Object, "spec", "names", "plural")
		kind, _, _ := unstructured.NestedString(d.Object, "spec", "names", "kind")
		newGroup := g.Group(name)
		d.SetName(plural + "." + newGroup)
		if err := unstructured.SetNestedField(d.Object, newGroup, "spec", "group"); err != nil {
			return nil, fmt.Errorf("embedded crd %s: %w", d.GetName(), err)
		}
		versions, _, _ := unstructured.NestedSlice(d.Object, "spec", "versions")
		if len(versions) != 1 {
			return nil, fmt.Errorf("embedded crd %s: %d versions, want 1", d.GetName(), len(versions))
		}
		v, _ := versions[0].(map[string]any)
		v["name"] = g.KindVersion(name, kind)
		if err := unstructured.SetNestedSlice(d.Object, versions, "spec", "versions"); err != nil {
			return nil, fmt.Errorf("embedded crd %s: %w", d.GetName(), err)
		}
		labels := d.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[LabelInstalledBy] = InstalledByFlotilla
		d.SetLabels(labels)
		out = append(out, d)
	}
	return out, nil
}

// RefuseForeign returns an error naming every CRD of defs the host already
// holds without LabelInstalledBy, when defs are Karmada's groups: those
// CRDs were installed by Karmada (its chart, karmadactl or the operator),
// so a Karmada control plane serves these groups on this host, and
// installing over them would take its API away under it. flotilla's own
// groups are not checked: nothing else installs them, and CRDs installed
// before the label existed carry none.
func RefuseForeign(ctx context.Context, c client.Client, defs []*unstructured.Unstructured) error {
	var foreign []string
	for _, d := range defs {
		group, _, _ := unstructured.NestedString(d.Object, "spec", "group")
		if !apis.KarmadaGroups.Owns(group) {
			continue
		}
		var stored apiextensionsv1.CustomResourceDefinition
		err := c.Get(ctx, client.ObjectKey{Name: d.GetName()}, &stored)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("read crd %s to check who installed it: %w", d.GetName(), err)
		}
		if stored.Labels[LabelInstalledBy] != InstalledByFlotilla {
			foreign = append(foreign, d.GetName())
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	sort.Strings(foreign)
	return fmt.Errorf("a Karmada control plane already serves Karmada's API groups on this host: the CRDs %s exist without the label %s=%s, so flotilla did not install them; "+
		"flotilla will not take Karmada's API over while its controllers may run: run flotilla beside it with --api-groups=flotilla, or remove Karmada from this host first",
		strings.Join(foreign, ", "), LabelInstalledBy, InstalledByFlotilla)
}
