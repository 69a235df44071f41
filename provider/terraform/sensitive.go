package terraform

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Objects of a sensitive kind (Secrets, and the kinds the provider's
// sensitive_kinds adds) are shown in rendered, dependencies_rendered and
// the placement data source with every value of their data fields replaced
// by a tag. Terraform shows a computed attribute in the clear whatever the
// sensitivity of the inputs it came from, and a Dynamic or map attribute
// cannot be sensitive for some objects only; a tag per key keeps the values
// out of the plan and the state while a change of one key still shows on
// that key. Apply never uses these values: it renders again from the
// configuration and checks each rendering against the plan.
//
// A tag must not let whoever reads a plan test guesses offline: a plain
// hash of a PIN or a dictionary password, salted with what the plan also
// shows, is recovered in seconds. So a tag is an HMAC-SHA256 under a random
// key of the resource's own, kept in its private state, which Terraform
// never shows (neither the plan nor `terraform show -json`), and the
// rendered-hash annotation, a plain hash of the whole object, is shown
// keyed the same way. A resource has no private state before it exists, so
// a create's plan shows every value as the bare sensitiveShown; Create makes
// the key and the refresh that follows records the tags.

// sensitiveShown is what a sensitive value is shown as when there is no
// key: on the create's plan, and in the placement data source.
const sensitiveShown = "(sensitive value)"

// privateSensitiveKey is where the resource's HMAC key is kept in private state.
const privateSensitiveKey = "sensitive"

// sensitiveKeySize is the HMAC key's length: SHA-256's block of security.
const sensitiveKeySize = 32

// sensitiveFields are the top-level fields whose values are hashed.
var sensitiveFields = []string{"data", "stringData", "binaryData"}

// defaultSensitiveKind is always sensitive.
var defaultSensitiveKind = schema.GroupKind{Kind: "Secret"}

// sensitiveKinds is the set of kinds whose data is shown as hashes.
type sensitiveKinds map[schema.GroupKind]bool

// parseSensitiveKinds reads sensitive_kinds: kubectl's KIND.GROUP form,
// "Secret" for the core group. Secret is always in the set.
func parseSensitiveKinds(entries []string) (sensitiveKinds, error) {
	out := sensitiveKinds{defaultSensitiveKind: true}
	for _, e := range entries {
		gk := schema.ParseGroupKind(e)
		if gk.Kind == "" || strings.ContainsAny(e, " /") {
			return nil, fmt.Errorf("%q is not a kind: want KIND or KIND.GROUP, e.g. Secret or SealedSecret.bitnami.com", e)
		}
		out[gk] = true
	}
	return out, nil
}

// redact returns obj with the values of its data fields (and its
// rendered-hash annotation) replaced by tags under key when its kind is
// sensitive, or obj itself otherwise; a nil key shows them all as
// sensitiveShown. obj is not modified.
func (s sensitiveKinds) redact(obj map[string]any, key []byte) map[string]any {
	if obj == nil || !s.has(obj) {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	salt := objectSalt(obj)
	for _, field := range sensitiveFields {
		v, ok := obj[field]
		if !ok || v == nil {
			continue
		}
		values, isMap := v.(map[string]any)
		if !isMap {
			out[field] = sensitiveTag(key, salt, field, "", v)
			continue
		}
		tagged := make(map[string]any, len(values))
		for k, value := range values {
			tagged[k] = sensitiveTag(key, salt, field, k, value)
		}
		out[field] = tagged
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			if hash, ok := annotations[render.AnnotationRenderedHash].(string); ok {
				m := maps.Clone(meta)
				a := maps.Clone(annotations)
				a[render.AnnotationRenderedHash] = shownRenderedHash(key, hash)
				m["annotations"] = a
				out["metadata"] = m
			}
		}
	}
	return out
}

// redactAll redacts every cluster's object.
func (s sensitiveKinds) redactAll(objects map[string]map[string]any, key []byte) map[string]map[string]any {
	out := make(map[string]map[string]any, len(objects))
	for cluster, obj := range objects {
		out[cluster] = s.redact(obj, key)
	}
	return out
}

// withTagsOf is recorded, a sensitive object as state shows it, with its
// tagged values and rendered-hash annotation taken from shown, the live
// object as refresh shows it now. A state whose values are untagged (the
// create's plan) or tagged another way (an earlier version) then takes
// the tags without taking the live object's formatting of other fields
// (a quantity as the apiserver writes it), which the plan would show as a
// change. The tags say nothing yet about drift: the next plan compares them
// with the configuration's. recorded is not modified.
func (s sensitiveKinds) withTagsOf(recorded, shown map[string]any) map[string]any {
	if recorded == nil || shown == nil || !s.has(recorded) {
		return recorded
	}
	out := maps.Clone(recorded)
	for _, field := range sensitiveFields {
		if v, ok := shown[field]; ok {
			out[field] = v
		}
	}
	meta, _ := recorded["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	shownMeta, _ := shown["metadata"].(map[string]any)
	shownAnnotations, _ := shownMeta["annotations"].(map[string]any)
	if hash, ok := shownAnnotations[render.AnnotationRenderedHash]; ok && annotations != nil {
		m, a := maps.Clone(meta), maps.Clone(annotations)
		a[render.AnnotationRenderedHash] = hash
		m["annotations"] = a
		out["metadata"] = m
	}
	return out
}

// shownRenderedHash is what the rendered-hash annotation of a sensitive
// object is shown as. The hash covers the data values, so shown as it is
// it would be as guessable as a plain hash of each.
func shownRenderedHash(key []byte, hash string) string {
	if key == nil {
		return sensitiveShown
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("flotilla-rendered-hash\x00" + hash))
	return fmt.Sprintf("(sensitive hmac:%x)", mac.Sum(nil)[:8])
}

// has reports whether obj's kind is sensitive. A nil set holds Secret.
func (s sensitiveKinds) has(obj map[string]any) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gk := schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
	if s == nil {
		return gk == defaultSensitiveKind
	}
	return s[gk]
}

// objectSalt is the object's identity, so that one value in two objects or
// under two keys hashes differently and precomputed tables do not apply.
func objectSalt(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	namespace, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	kind, _ := obj["kind"].(string)
	return kind + "/" + namespace + "/" + name
}

// sensitiveTag is what a sensitive value is shown as: 64 bits of its
// HMAC-SHA256 under key, which tell two values apart and, without the key,
// say nothing about the value; sensitiveShown when key is nil.
func sensitiveTag(key []byte, salt, field, k string, value any) string {
	if key == nil {
		return sensitiveShown
	}
	s, ok := value.(string)
	if !ok {
		b, _ := json.Marshal(value)
		s = string(b)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("flotilla-sensitive\x00" + salt + "\x00" + field + "\x00" + k + "\x00" + s))
	return fmt.Sprintf("(sensitive value hmac:%x)", mac.Sum(nil)[:8])
}

// readSensitiveKey is the resource's HMAC key from private state, or nil.
func readSensitiveKey(ctx context.Context, p privateGetter) ([]byte, diag.Diagnostics) {
	if p == nil {
		return nil, nil
	}
	b, diags := p.GetKey(ctx, privateSensitiveKey)
	if len(b) == 0 || diags.HasError() {
		return nil, diags
	}
	var key []byte
	if err := json.Unmarshal(b, &key); err != nil || len(key) != sensitiveKeySize {
		// A damaged key is replaced: the next refresh or plan shows new tags.
		return nil, diags
	}
	return key, diags
}

// newSensitiveKey makes a random HMAC key and records it in private state.
func newSensitiveKey(ctx context.Context, p privateSetter) ([]byte, diag.Diagnostics) {
	var diags diag.Diagnostics
	key := make([]byte, sensitiveKeySize)
	if _, err := rand.Read(key); err != nil {
		diags.AddError("Cannot make a key for sensitive values", err.Error())
		return nil, diags
	}
	b, _ := json.Marshal(key)
	return key, p.SetKey(ctx, privateSensitiveKey, b)
}

// sensitiveKeyOrNew is the recorded key, or a new one recorded in out.
func sensitiveKeyOrNew(ctx context.Context, in privateGetter, out privateSetter) ([]byte, diag.Diagnostics) {
	key, diags := readSensitiveKey(ctx, in)
	if key != nil || diags.HasError() {
		return key, diags
	}
	key, d := newSensitiveKey(ctx, out)
	diags.Append(d...)
	return key, diags
}

// withStringData is a Secret's managed view with the stringData keys the
// applied object set, read back from the live data. The apiserver folds
// stringData into data and never stores it, so the managed view has no
// stringData and every refresh would otherwise show it as removed. Other
// objects are returned as they are. managed is not modified.
func withStringData(desired, managed, live map[string]any) map[string]any {
	apiVersion, _ := desired["apiVersion"].(string)
	kind, _ := desired["kind"].(string)
	want, _ := desired["stringData"].(map[string]any)
	if apiVersion != "v1" || kind != "Secret" || len(want) == 0 || managed == nil || managed["stringData"] != nil {
		return managed
	}
	liveData, _ := live["data"].(map[string]any)
	got := make(map[string]any, len(want))
	for key := range want {
		encoded, ok := liveData[key].(string)
		if !ok {
			continue // gone: the next plan puts it back
		}
		if b, err := base64.StdEncoding.DecodeString(encoded); err == nil {
			got[key] = string(b)
		}
	}
	out := make(map[string]any, len(managed)+1)
	for k, v := range managed {
		out[k] = v
	}
	out["stringData"] = got
	return out
}
