package hoststore

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// LoadInterpreter returns the fleet's resource interpreter: the built-in
// table extended by the ResourceInterpreterCustomizations
// (config.flotilla.io) in the host, read from c, loaded afresh: every
// script's top level runs on each call, so long-running callers use an
// Interpreters cache instead. A refused customization (a script that does
// not compile, two for one operation) leaves its kind failing every
// customizable
// operation with the refusal, which is reported where that kind is
// worked on; other kinds are unaffected. A host without the CRD has no
// customizations.
func LoadInterpreter(ctx context.Context, c client.Reader) (*interpret.Interpreter, error) {
	var list configv1.ResourceInterpreterCustomizationList
	if err := c.List(ctx, &list); err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list resource interpreter customizations: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	rics := make([]api.ResourceInterpreterCustomization, len(list.Items))
	for i := range list.Items {
		rics[i] = list.Items[i].Engine()
	}
	// The refusals live on in the Interpreter (see above).
	in, _ := interpret.New(rics, interpret.WithClock(time.Now))
	return in, nil
}
