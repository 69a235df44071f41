package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// establishPoll is how often a CustomResourceDefinition is read while
// waiting for it to be Established; the apiserver usually needs well under
// a second.
const establishPoll = 100 * time.Millisecond

// ErrNotEstablished is wrapped when a CustomResourceDefinition was applied
// but did not become Established within the executor's EstablishTimeout.
var ErrNotEstablished = errors.New("custom resource definition not established")

// waitEstablished returns once the CustomResourceDefinition crd (as the
// apply returned it) has condition Established, polling with ctx and at
// most EstablishTimeout. NamesAccepted=False fails at once: the names clash
// with another definition and will not be served.
func (c *clusterRun) waitEstablished(ctx context.Context, client dynamic.ResourceInterface, crd *unstructured.Unstructured) error {
	state, err := established(crd)
	if state || err != nil {
		return err
	}
	var last *unstructured.Unstructured
	poll := func(ctx context.Context) (bool, error) {
		got, err := client.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = got
		return established(got)
	}
	err = wait.PollUntilContextTimeout(ctx, establishPoll, c.e.establishTimeout(), false, poll)
	if err == nil {
		return nil
	}
	if wait.Interrupted(err) && ctx.Err() == nil {
		why := ""
		if last != nil {
			why = "; conditions: " + conditionSummary(last)
		}
		return fmt.Errorf("%w after %s%s", ErrNotEstablished, c.e.establishTimeout(), why)
	}
	return fmt.Errorf("wait for Established: %w", err)
}

// established reads the Established condition; NamesAccepted=False is an
// error.
func established(crd *unstructured.Unstructured) (bool, error) {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	ok := false
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		typ, _ := cond["type"].(string)
		status, _ := cond["status"].(string)
		switch {
		case typ == "Established" && status == "True":
			ok = true
		case typ == "NamesAccepted" && status == "False":
			msg, _ := cond["message"].(string)
			return false, fmt.Errorf("%w: names not accepted: %s", ErrNotEstablished, msg)
		}
	}
	return ok, nil
}

// conditionSummary lists "type=status (reason)" for each condition.
func conditionSummary(crd *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	out := ""
	for i, c := range conditions {
		cond, _ := c.(map[string]any)
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%v=%v (%v)", cond["type"], cond["status"], cond["reason"])
	}
	if out == "" {
		return "none"
	}
	return out
}
