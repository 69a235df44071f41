package override

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// applyImage rewrites one component of the images an ImageOverrider targets:
// the predicate's path, or without a predicate every container and init
// container image of a well-known workload kind.
func applyImage(obj map[string]any, kind schema.GroupKind, o api.ImageOverrider) (map[string]any, error) {
	var ops []operation
	if o.Predicate != nil {
		image, err := getStringPointer(obj, o.Predicate.Path)
		if err != nil {
			return nil, &pathError{path: o.Predicate.Path, err: err}
		}
		op, err := imageOperation(o.Predicate.Path, image, o)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	} else {
		for _, c := range podContainers(obj, kind) {
			path := c.pointer + "/image"
			image, ok := c.fields["image"].(string)
			if !ok {
				return nil, &pathError{path: path, err: fmt.Errorf("container %v has no image", c.fields["name"])}
			}
			op, err := imageOperation(path, image, o)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
	}
	out, err := patchObject(obj, ops)
	if err != nil {
		return nil, fmt.Errorf("patch images: %w", err)
	}
	return out, nil
}

// imageOperation computes the replace operation that sets the overridden
// image at path.
func imageOperation(path, image string, o api.ImageOverrider) (operation, error) {
	newImage, err := overrideImage(image, o)
	if err != nil {
		return operation{}, &pathError{path: path, err: err}
	}
	return operation{Op: string(api.OverriderOpReplace), Path: path, Value: stringValue(newImage)}, nil
}

// overrideImage applies one component change to an image reference. "add"
// appends the value to the component as text, as Karmada does, so a Tag add
// of "-debug" turns "1.27" into "1.27-debug". The result must itself be a
// valid reference, so a mistake shows up in the plan rather than as an image
// pull failure in one cluster.
func overrideImage(image string, o api.ImageOverrider) (string, error) {
	ref, err := ParseImage(image)
	if err != nil {
		return "", err
	}
	switch o.Component {
	case api.Registry:
		switch o.Operator {
		case api.OverriderOpAdd:
			ref.Registry += o.Value
		case api.OverriderOpReplace:
			ref.Registry = o.Value
		case api.OverriderOpRemove:
			ref.Registry = ""
		default:
			return "", unsupportedOperator(o.Operator)
		}
	case api.Repository:
		switch o.Operator {
		case api.OverriderOpAdd:
			ref.Repository += o.Value
		case api.OverriderOpReplace:
			ref.Repository = o.Value
		case api.OverriderOpRemove:
			ref.Repository = ""
		default:
			return "", unsupportedOperator(o.Operator)
		}
	case api.Tag:
		switch o.Operator {
		case api.OverriderOpAdd:
			err = ref.setTagOrDigest(ref.tagOrDigest() + o.Value)
		case api.OverriderOpReplace:
			err = ref.setTagOrDigest(o.Value)
		case api.OverriderOpRemove:
			ref.removeTagOrDigest()
		default:
			return "", unsupportedOperator(o.Operator)
		}
		if err != nil {
			return "", fmt.Errorf("override tag of image %q: %w", image, err)
		}
	default:
		return "", fmt.Errorf("unknown image component %q (want Registry, Repository or Tag)", o.Component)
	}
	result := ref.String()
	if _, err := ParseImage(result); err != nil {
		return "", fmt.Errorf("%s %s %q on image %q gives an invalid image: %w", o.Component, o.Operator, o.Value, image, err)
	}
	return result, nil
}

func unsupportedOperator(op api.OverriderOperator) error {
	return fmt.Errorf("unknown operator %q (want add, remove or replace)", op)
}
