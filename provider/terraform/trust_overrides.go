package terraform

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// A recorded connection whose credentials do not come from the state
// itself (a kubeconfig file, or a credential plugin the provider block
// trusts) sends the operator's credentials wherever its other recorded
// attributes say. Whoever can edit the state could keep the operator's
// kubeconfig_path and add a proxy_url of theirs with insecure (or a
// tls_server_name their certificate matches, or another context of the
// same file): the next refresh or destroy would hand them the token, an
// exec-minted one included. So such a connection is used only when it
// records none of these overrides, or the provider block's
// trusted_connection_overrides (or the configuration at hand) names
// exactly the same ones. A connection whose credentials are in the state
// (host with token or client certificate, an inline kubeconfig with
// inline credentials) gives away nothing the state does not already hold.

// connectionOverrides are the recorded attributes that choose where a
// connection's credentials go, or how the server is checked.
type connectionOverrides struct {
	Context       string
	ProxyURL      string
	Insecure      bool
	TLSServerName string
}

// overridesOf is c's overrides; the zero value when it records none.
func overridesOf(c member.Connection) connectionOverrides {
	return connectionOverrides{Context: c.Context, ProxyURL: c.ProxyURL, Insecure: c.Insecure, TLSServerName: c.TLSServerName}
}

// names lists the attributes o sets, by attribute name (never a value: a
// proxy URL may carry a password).
func (o connectionOverrides) names() []string {
	var out []string
	if o.Context != "" {
		out = append(out, "context")
	}
	if o.ProxyURL != "" {
		out = append(out, "proxy_url")
	}
	if o.Insecure {
		out = append(out, "insecure")
	}
	if o.TLSServerName != "" {
		out = append(out, "tls_server_name")
	}
	return out
}

// trustedOverridesModel is one trusted_connection_overrides entry.
type trustedOverridesModel struct {
	Context       types.String `tfsdk:"context"`
	ProxyURL      types.String `tfsdk:"proxy_url"`
	Insecure      types.Bool   `tfsdk:"insecure"`
	TLSServerName types.String `tfsdk:"tls_server_name"`
}

// trustedOverridesFromConfig reads trusted_connection_overrides.
func trustedOverridesFromConfig(ctx context.Context, list types.List) ([]connectionOverrides, error) {
	var entries []trustedOverridesModel
	if d := list.ElementsAs(ctx, &entries, false); d.HasError() {
		return nil, fmt.Errorf("trusted_connection_overrides: %s", d[0].Detail())
	}
	out := make([]connectionOverrides, 0, len(entries))
	for i, e := range entries {
		if e.Context.IsUnknown() || e.ProxyURL.IsUnknown() || e.Insecure.IsUnknown() || e.TLSServerName.IsUnknown() {
			return nil, fmt.Errorf("trusted_connection_overrides[%d] must be known when the provider is configured", i)
		}
		out = append(out, connectionOverrides{Context: e.Context.ValueString(), ProxyURL: e.ProxyURL.ValueString(),
			Insecure: e.Insecure.ValueBool(), TLSServerName: e.TLSServerName.ValueString()})
	}
	return out, nil
}

// credentialSource says where c's credentials come from when that is not
// the state itself: "" when they are in the state.
func credentialSource(c member.Connection) string {
	switch {
	case c.KubeconfigPath != "":
		return "the kubeconfig file"
	case c.Exec != nil:
		return fmt.Sprintf("the credential plugin %q", c.Exec.Command)
	case len(c.Kubeconfig) > 0:
		cfg, err := clientcmd.Load(c.Kubeconfig)
		if err != nil {
			return ""
		}
		for _, name := range sortedKeys(cfg.AuthInfos) {
			if u := cfg.AuthInfos[name]; u.Exec != nil {
				return fmt.Sprintf("the credential plugin %q", u.Exec.Command)
			}
		}
	}
	return ""
}

// checkOverrides refuses a recorded connection that sends credentials from
// outside the state with overrides that neither the provider block nor the
// configuration at hand names exactly.
func (t trustedConnections) checkOverrides(c member.Connection) error {
	o := overridesOf(c)
	if o == (connectionOverrides{}) {
		return nil
	}
	source := credentialSource(c)
	if source == "" {
		return nil
	}
	for _, e := range t.overrides {
		if e == o {
			return nil
		}
	}
	return fmt.Errorf("the recorded connection sends the credentials of %s with %s set, which no entry of the provider "+
		"block's trusted_connection_overrides names exactly; a connection read from state does not send credentials it "+
		"does not hold through a proxy, to another context or past a relaxed server check that the provider "+
		"configuration does not name", source, strings.Join(o.names(), ", "))
}
