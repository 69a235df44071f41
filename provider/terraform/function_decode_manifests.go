package terraform

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

type decodeManifestsFunction struct{}

var _ function.Function = decodeManifestsFunction{}

func newDecodeManifestsFunction() function.Function { return decodeManifestsFunction{} }

// Metadata implements the framework interface: it returns the type name.
func (decodeManifestsFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "decode_manifests"
}

// Definition implements function.Function: it returns the signature.
func (decodeManifestsFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Decode multi-document Kubernetes YAML into a list of manifests",
		MarkdownDescription: "Splits a multi-document YAML string on `---`, skips empty documents and returns one " +
			"object per document, in order, ready to pass to `flotilla_manifest.manifest` (for example with " +
			"`for_each`). Every document must be a mapping with `apiVersion`, `kind` and `metadata.name`.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "manifests",
				MarkdownDescription: "One or more YAML (or JSON) documents separated by `---`.",
			},
		},
		Return: function.DynamicReturn{},
	}
}

// Run decodes a multi-document YAML string into a list of objects.
func (decodeManifestsFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var text string
	resp.Error = function.ConcatFuncErrors(resp.Error, req.Arguments.Get(ctx, &text))
	if resp.Error != nil {
		return
	}
	docs, err := decodeManifests([]byte(text))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	elems := make([]attr.Value, len(docs))
	elemTypes := make([]attr.Type, len(docs))
	for i, d := range docs {
		v, err := valueFromJSON(d)
		if err != nil {
			resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("document %d: %v", i+1, err))
			return
		}
		elems[i], elemTypes[i] = v, v.Type(ctx)
	}
	list, diags := types.TupleValue(elemTypes, elems)
	if diags.HasError() {
		resp.Error = function.FuncErrorFromDiags(ctx, diags)
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Error, resp.Result.Set(ctx, types.DynamicValue(list)))
}

// decodeManifests splits multi-document YAML and decodes each non-empty
// document into a JSON-shaped map. Numbers stay exact (json.Number).
func decodeManifests(data []byte) ([]map[string]any, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []map[string]any
	for n := 1; ; n++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("document %d: not a mapping: %w", n, err)
		}
		if err := checkManifestIdentity(obj); err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		out = append(out, obj)
	}
}

func checkManifestIdentity(obj map[string]any) error {
	for _, f := range []string{"apiVersion", "kind"} {
		if s, _ := obj[f].(string); s == "" {
			return fmt.Errorf("field %s is required", f)
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	if name, _ := meta["name"].(string); name == "" {
		return fmt.Errorf("field metadata.name is required")
	}
	return nil
}
