package terraform

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Objects of a sensitive kind (Secrets, and the kinds the provider's
// sensitive_kinds adds) are shown in rendered, dependencies_rendered and
// the placement data source with every value of their data fields replaced
// by a salted hash. Terraform shows a computed attribute in the clear
// whatever the sensitivity of the inputs it came from, and a Dynamic or
// map attribute cannot be sensitive for some objects only; hashing per key
// keeps the values out of the plan and the state while a change of one key
// still shows on that key. Apply never uses these values: it renders again
// from the configuration and checks the whole object's rendered hash.

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

// redact returns obj with the values of its data fields hashed when its
// kind is sensitive, or obj itself otherwise. obj is not modified.
func (s sensitiveKinds) redact(obj map[string]any) map[string]any {
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
			out[field] = sensitiveHash(salt, field, "", v)
			continue
		}
		hashed := make(map[string]any, len(values))
		for key, value := range values {
			hashed[key] = sensitiveHash(salt, field, key, value)
		}
		out[field] = hashed
	}
	return out
}

// redactAll redacts every cluster's object.
func (s sensitiveKinds) redactAll(objects map[string]map[string]any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(objects))
	for cluster, obj := range objects {
		out[cluster] = s.redact(obj)
	}
	return out
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

// sensitiveHash is what a sensitive value is shown as. It names no byte of
// the value; 64 bits of a salted SHA-256 tell two values apart.
func sensitiveHash(salt, field, key string, value any) string {
	s, ok := value.(string)
	if !ok {
		b, _ := json.Marshal(value)
		s = string(b)
	}
	sum := sha256.Sum256([]byte("flotilla-sensitive\x00" + salt + "\x00" + field + "\x00" + key + "\x00" + s))
	return fmt.Sprintf("(sensitive value sha256:%x)", sum[:8])
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
