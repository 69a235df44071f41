package terraform

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// Refresh and destroy get no resource configuration, so they reach members
// through connections read from state: flotilla_manifest's connections
// attribute and flotilla_cluster's own attributes. The state is data, not
// code: whoever can write it (a shared backend, a CI job) must not be able
// to make the next refresh run a command on the machine that runs
// Terraform, or send a local file's content (a kubeconfig user's tokenFile)
// to a host of their choosing. So a recorded connection that runs a
// credential plugin, or an inline kubeconfig that reads credentials from
// files, is used only if the provider block (which refresh does get)
// trusts exactly that plugin, or the configuration at hand names the same
// one. A recorded kubeconfig path needs no trust: the file and the plugins
// it names are the machine owner's own configuration, and its credentials
// go only to the servers it names, unless the state adds overrides that
// send them elsewhere (see trust_overrides.go).

// trustedConnections is what the provider block trusts recorded connections to run.
type trustedConnections struct {
	exec []member.ExecConfig
	// overrides are the connection overrides a recorded connection whose
	// credentials are not in the state may carry (trust_overrides.go).
	overrides []connectionOverrides
}

// trustedExecModel is one trusted_exec entry.
type trustedExecModel struct {
	Command types.String `tfsdk:"command"`
	Args    types.List   `tfsdk:"args"`
	Env     types.Map    `tfsdk:"env"`
}

// trustedFromConfig reads trusted_exec.
func trustedFromConfig(ctx context.Context, execList types.List) (trustedConnections, error) {
	var out trustedConnections
	var entries []trustedExecModel
	if d := execList.ElementsAs(ctx, &entries, false); d.HasError() {
		return out, fmt.Errorf("trusted_exec: %s", d[0].Detail())
	}
	for i, e := range entries {
		if e.Command.IsUnknown() || e.Args.IsUnknown() || e.Env.IsUnknown() {
			return out, fmt.Errorf("trusted_exec[%d] must be known when the provider is configured", i)
		}
		x := member.ExecConfig{Command: e.Command.ValueString()}
		if d := e.Args.ElementsAs(ctx, &x.Args, false); d.HasError() {
			return out, fmt.Errorf("trusted_exec[%d].args: %s", i, d[0].Detail())
		}
		if d := e.Env.ElementsAs(ctx, &x.Env, false); d.HasError() {
			return out, fmt.Errorf("trusted_exec[%d].env: %s", i, d[0].Detail())
		}
		out.exec = append(out.exec, x)
	}
	return out, nil
}

// withConnection is t also trusting the plugins c, a connection the
// configuration names, runs, and the overrides it sets.
func (t trustedConnections) withConnection(c member.Connection) trustedConnections {
	out := trustedConnections{exec: slices.Clone(t.exec), overrides: slices.Clone(t.overrides)}
	if o := overridesOf(c); o != (connectionOverrides{}) {
		out.overrides = append(out.overrides, o)
	}
	if c.Exec != nil {
		out.exec = append(out.exec, *c.Exec)
	}
	if len(c.Kubeconfig) > 0 {
		if cfg, err := clientcmd.Load(c.Kubeconfig); err == nil {
			for _, u := range cfg.AuthInfos {
				if u.Exec != nil {
					out.exec = append(out.exec, execFromKubeconfig(u.Exec))
				}
			}
		}
	}
	return out
}

// check returns nil if a connection read from state runs only what t
// trusts, or an error that names the command or file (never a credential).
func (t trustedConnections) check(c member.Connection) error {
	if c.Exec != nil {
		if err := t.checkExec(*c.Exec); err != nil {
			return err
		}
	}
	if len(c.Kubeconfig) > 0 {
		cfg, err := clientcmd.Load(c.Kubeconfig)
		if err != nil {
			return fmt.Errorf("the recorded inline kubeconfig is not valid")
		}
		if err := t.checkKubeconfig(cfg); err != nil {
			return err
		}
	}
	return t.checkOverrides(c)
}

// checkKubeconfig refuses an inline kubeconfig whose users run plugins or
// whose users or clusters read files, unless the plugin is trusted.
func (t trustedConnections) checkKubeconfig(cfg *clientcmdapi.Config) error {
	for _, name := range sortedKeys(cfg.AuthInfos) {
		u := cfg.AuthInfos[name]
		switch {
		case u.AuthProvider != nil:
			return fmt.Errorf("the recorded inline kubeconfig's user %q uses the auth-provider %q, which a connection "+
				"read from state may not run", name, u.AuthProvider.Name)
		case u.TokenFile != "" || u.ClientCertificate != "" || u.ClientKey != "":
			return fmt.Errorf("the recorded inline kubeconfig's user %q reads credentials from a file, which a "+
				"connection read from state may not do", name)
		case u.Exec != nil:
			if err := t.checkExec(execFromKubeconfig(u.Exec)); err != nil {
				return fmt.Errorf("user %q of the recorded inline kubeconfig: %w", name, err)
			}
		}
	}
	for _, name := range sortedKeys(cfg.Clusters) {
		if cfg.Clusters[name].CertificateAuthority != "" {
			return fmt.Errorf("the recorded inline kubeconfig's cluster %q reads its CA from a file, which a "+
				"connection read from state may not do", name)
		}
	}
	return nil
}

// checkExec refuses a plugin no trusted entry matches exactly.
func (t trustedConnections) checkExec(x member.ExecConfig) error {
	for _, e := range t.exec {
		if e.Command == x.Command && slices.Equal(e.Args, x.Args) && maps.Equal(nonNil(e.Env), nonNil(x.Env)) {
			return nil
		}
	}
	env := sortedKeys(x.Env)
	sort.Strings(env)
	// The arguments and env values are not quoted: they may carry a credential.
	return fmt.Errorf("the recorded connection runs the credential plugin %q (%d arguments, env [%s]), which "+
		"no entry of the provider block's trusted_exec matches exactly (command, args and env); a connection read "+
		"from state runs no command the provider configuration does not name", x.Command, len(x.Args), strings.Join(env, ", "))
}

// execFromKubeconfig is a kubeconfig's user.exec as a connection's exec.
func execFromKubeconfig(e *clientcmdapi.ExecConfig) member.ExecConfig {
	x := member.ExecConfig{APIVersion: e.APIVersion, Command: e.Command, Args: e.Args}
	if len(e.Env) > 0 {
		x.Env = map[string]string{}
		for _, v := range e.Env {
			x.Env[v.Name] = v.Value
		}
	}
	return x
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
