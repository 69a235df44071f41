package shared

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
)

// The record of a take-over of a Karmada host: a ConfigMap in
// SystemNamespace that `adopt-karmada` writes and the control plane reads
// once at start. It lives there, not on the bindings or templates, because
// only the operator writes SystemNamespace: a tenant who may write a
// binding or a template must not be able to hand flotilla a member object
// to take over.
const (
	// KarmadaAdoptionConfigMap is the record's name in SystemNamespace.
	KarmadaAdoptionConfigMap = "flotilla-karmada-adoption"
	// KarmadaAdoptionKey is the record's data key: a JSON list of
	// KarmadaAdoptionEntry.
	KarmadaAdoptionKey = "adoptions.json"
)

// KarmadaAdoptionEntry is one template's adoption in the record.
type KarmadaAdoptionEntry struct {
	// Template is the template, as api.TemplateRef.String writes it.
	Template                  string `json:"template"`
	execution.KarmadaAdoption `json:",inline"`
}

// KarmadaAdoptions are the adoptions of the record, by the template's
// api.TemplateRef.ID. The zero value holds none.
type KarmadaAdoptions map[string]*execution.KarmadaAdoption

// For returns the adoption of the template ref, or nil.
func (a KarmadaAdoptions) For(ref api.TemplateRef) *execution.KarmadaAdoption {
	return a[ref.ID()]
}

// ParseKarmadaAdoptions decodes the record's data.
func ParseKarmadaAdoptions(data string) (KarmadaAdoptions, error) {
	var entries []KarmadaAdoptionEntry
	if err := json.Unmarshal([]byte(data), &entries); err != nil {
		return nil, fmt.Errorf("decode %s: %w", KarmadaAdoptionKey, err)
	}
	out := KarmadaAdoptions{}
	for i, e := range entries {
		ref, err := api.ParseTemplateRef(e.Template)
		if err != nil {
			return nil, fmt.Errorf("%s[%d].template: %w", KarmadaAdoptionKey, i, err)
		}
		a := e.KarmadaAdoption
		out[ref.ID()] = &a
	}
	return out, nil
}

// ReadKarmadaAdoptions reads the record from the host; none when it does
// not exist.
func ReadKarmadaAdoptions(ctx context.Context, c client.Reader) (KarmadaAdoptions, error) {
	var cm corev1.ConfigMap
	err := c.Get(ctx, client.ObjectKey{Namespace: SystemNamespace, Name: KarmadaAdoptionConfigMap}, &cm)
	switch {
	case IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the karmada adoption record %s/%s: %w", SystemNamespace, KarmadaAdoptionConfigMap, err)
	}
	a, err := ParseKarmadaAdoptions(cm.Data[KarmadaAdoptionKey])
	if err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %w", SystemNamespace, KarmadaAdoptionConfigMap, err)
	}
	return a, nil
}
