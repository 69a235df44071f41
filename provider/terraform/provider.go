// Package terraform is flotilla's Terraform front end. It is a thin adapter:
// it expands plans into engine inputs, calls the controlplane engine and
// flattens the results into state. It makes no scheduling decisions of its own.
package terraform

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
)

// Defaults applied when the provider block leaves a setting out.
const (
	DefaultFleet            = "default"
	DefaultFieldManager     = "flotilla"
	DefaultApplyParallelism = 8
	fleetEnv                = "FLOTILLA_FLEET"
)

// defaultProbeTimeout is member_probe_timeout's default: a healthy
// apiserver answers /readyz in milliseconds, and a member that does not
// answer costs a run this once (see engine's reach.go).
const defaultProbeTimeout = 3 * time.Second

// defaultConnectTimeout is member_connect_timeout's default: a TCP and TLS
// handshake with a live apiserver takes a few round trips, and 1.5 s still
// allows one lost SYN (resent after 1 s), while a member that accepts but
// never answers costs each provider process half the probe timeout less.
const defaultConnectTimeout = 1500 * time.Millisecond

// Config is the provider configuration after defaults, handed to resources,
// data sources and functions.
type Config struct {
	Fleet            string
	FieldManager     string
	ApplyParallelism int
	// RolloutTimeout bounds apply's wait for a healthy rollout and deletes,
	// where a resource's timeouts block sets none.
	RolloutTimeout time.Duration
	// ProbeTimeout is how long a member has to answer its probe before the
	// run treats it as unreachable (see engine's reach.go).
	ProbeTimeout time.Duration
	// ConnectTimeout bounds the probe's TCP and TLS handshakes within
	// ProbeTimeout (member.CacheOptions.ConnectTimeout).
	ConnectTimeout time.Duration
	// SensitiveKinds are the kinds whose data is shown as hashes (see sensitive.go).
	SensitiveKinds sensitiveKinds
	// Trusted lists what a connection recorded in state may run or read (see trust.go).
	Trusted trustedConnections
}

// providerData is what Configure hands to resources and data sources: the
// configuration and the one engine, which owns every member connection.
type providerData struct {
	Config
	Engine *engine.Engine
}

type flotillaProvider struct {
	version string
}

type providerModel struct {
	Fleet            types.String `tfsdk:"fleet"`
	FieldManager     types.String `tfsdk:"field_manager"`
	ApplyParallelism types.Int64  `tfsdk:"apply_parallelism"`
	DefaultTimeout   types.String `tfsdk:"default_timeout"`
	ProbeTimeout     types.String `tfsdk:"member_probe_timeout"`
	ConnectTimeout   types.String `tfsdk:"member_connect_timeout"`
	SensitiveKinds   types.List   `tfsdk:"sensitive_kinds"`
	TrustedExec      types.List   `tfsdk:"trusted_exec"`
	TrustedOverrides types.List   `tfsdk:"trusted_connection_overrides"`
}

var (
	_ provider.Provider              = (*flotillaProvider)(nil)
	_ provider.ProviderWithFunctions = (*flotillaProvider)(nil)
)

// New returns a constructor for the provider, as providerserver.Serve expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &flotillaProvider{version: version} }
}

// Metadata implements the framework interface: it returns the type name.
func (p *flotillaProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "flotilla"
	resp.Version = p.version
}

// Schema implements the framework interface: it returns the schema.
func (p *flotillaProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Flotilla runs one application across many Kubernetes clusters with an embedded, " +
			"Karmada-compatible scheduler. No hub cluster is installed: `terraform plan` shows the placement " +
			"and the exact per-cluster manifests before anything rolls out.",
		Attributes: map[string]schema.Attribute{
			"fleet": schema.StringAttribute{
				MarkdownDescription: "Name of the fleet. It is written into the ownership labels of every object flotilla " +
					"applies, so two fleets never touch each other's objects. Falls back to the `FLOTILLA_FLEET` " +
					"environment variable, then to `" + DefaultFleet + "`.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.RegexMatches(labelValueRE, "must be a valid Kubernetes label value of at most 63 characters")},
			},
			"field_manager": schema.StringAttribute{
				MarkdownDescription: "Field manager name used for server-side apply in member clusters. Defaults to `" + DefaultFieldManager + "`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthBetween(1, 128)},
			},
			"default_timeout": schema.StringAttribute{
				MarkdownDescription: "How long `flotilla_manifest` waits for a rollout to become healthy, and for a delete, when its `timeouts` block sets nothing, as a Go duration such as `5m`. Defaults to `10m`.",
				Optional:            true,
				Validators:          []validator.String{durationValidator{}},
			},
			"member_probe_timeout": schema.StringAttribute{
				MarkdownDescription: "How long a member cluster has to answer a probe (`GET /readyz`) before the run treats it as unreachable, as a Go duration such as `3s`. " +
					"A member that does not answer costs a run one such timeout: every later read, plan and apply of the run, and of the minute after, skips it at once and says why. Defaults to `3s`.",
				Optional:   true,
				Validators: []validator.String{durationValidator{}},
			},
			"member_connect_timeout": schema.StringAttribute{
				MarkdownDescription: "How long a probe may take to connect to a member cluster (the TCP and TLS handshakes, after any credential plugin has run), within `member_probe_timeout`, as a Go duration such as `1500ms`. " +
					"A member whose address accepts connections but whose apiserver never completes the handshake (frozen, or behind a network that drops packets) is unreachable after it; a member that is connected keeps the whole `member_probe_timeout` to answer, so a slow apiserver is not taken for a stopped one. " +
					"Raise it for members far away; at `member_probe_timeout` or more only that applies. Defaults to `1.5s`.",
				Optional:   true,
				Validators: []validator.String{durationValidator{}},
			},
			"apply_parallelism": schema.Int64Attribute{
				MarkdownDescription: "How many member clusters are written to at once. Defaults to 8.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.Between(1, 256)},
			},
			"sensitive_kinds": schema.ListAttribute{
				MarkdownDescription: "Kinds, besides `Secret`, whose `data`, `stringData` and `binaryData` values `flotilla_manifest` and " +
					"`flotilla_placement` hide in `rendered` and `dependencies_rendered`, as `KIND` or kubectl's `KIND.GROUP` " +
					"(e.g. `SealedSecret.bitnami.com`). Secrets are always hidden. `flotilla_manifest` shows each value as " +
					"`(sensitive value hmac:…)`, an HMAC-SHA256 under a random key kept in the resource's private state, which changes " +
					"when the value does, so a plan still shows which key changed while nothing in it can be tested against a guess; " +
					"`flotilla_placement` shows `(sensitive value)`.",
				ElementType: types.StringType,
				Optional:    true,
			},
			"trusted_exec": schema.ListNestedAttribute{
				MarkdownDescription: "Credential plugins that a connection recorded in state may run. Refresh and destroy get no " +
					"resource configuration: `flotilla_manifest` reaches its clusters through its recorded `connections`, and " +
					"`flotilla_cluster` through its own state. Whoever can edit the state could put any command there, so a " +
					"recorded `exec` (or a recorded inline kubeconfig's `user.exec`) runs only if an entry here has the same " +
					"`command`, `args` and `env`; otherwise refresh keeps the last known state with a warning and destroy " +
					"fails with an error naming the command. A recorded inline kubeconfig that reads credentials from files " +
					"(`tokenFile`, certificate, key or CA files) or uses an `auth-provider` is refused the same way, always. " +
					"Plan and apply use the configuration's connections and need no entry; a kubeconfig file (`kubeconfig.path`) " +
					"needs none either, as the file and the plugins it names are the machine's own.",
				Optional: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"command": schema.StringAttribute{MarkdownDescription: "The executable, exactly as the connection names it.", Required: true},
					// Plugin arguments often carry a token or an account name.
					"args": schema.ListAttribute{MarkdownDescription: "Its arguments, exactly as the connection lists them. Sensitive.",
						ElementType: types.StringType, Optional: true, Sensitive: true},
					"env": schema.MapAttribute{MarkdownDescription: "The environment variables the connection adds, exactly. Sensitive.",
						ElementType: types.StringType, Optional: true, Sensitive: true},
				}},
			},
			"trusted_connection_overrides": schema.ListNestedAttribute{
				MarkdownDescription: "Connection overrides that a connection recorded in state may carry when its credentials " +
					"are not in the state: a kubeconfig file (`kubeconfig.path`), an `exec` plugin, or an inline kubeconfig " +
					"whose user runs one. Whoever can edit the state could keep the operator's kubeconfig path and add a " +
					"`proxy_url` of theirs with `insecure`, a `tls_server_name`, or another `context`, and the next refresh " +
					"or destroy would send them the operator's token. So such a connection that records any of `context`, " +
					"`proxy_url`, `insecure` or `tls_server_name` is used only if an entry here has exactly the same four " +
					"(unset ones unset); otherwise refresh keeps the last known state with a warning and destroy fails with " +
					"an error naming the attributes and the cluster, contacting nothing. Plan and apply use the " +
					"configuration's connections and need no entry, and neither does a connection whose credentials are in " +
					"the state (`host` with `token` or a client certificate).",
				Optional: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"context":         schema.StringAttribute{MarkdownDescription: "The kubeconfig context, exactly as the connection names it.", Optional: true},
					"proxy_url":       schema.StringAttribute{MarkdownDescription: "The proxy, exactly as the connection names it. Sensitive.", Optional: true, Sensitive: true},
					"insecure":        schema.BoolAttribute{MarkdownDescription: "Whether the connection skips the server certificate check.", Optional: true},
					"tls_server_name": schema.StringAttribute{MarkdownDescription: "The server name the certificate is checked against, exactly.", Optional: true},
				}},
			},
		},
	}
}

// Configure implements the framework interface: it receives what the provider configured.
func (p *flotillaProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg := Config{Fleet: DefaultFleet, FieldManager: DefaultFieldManager, ApplyParallelism: DefaultApplyParallelism, RolloutTimeout: defaultRolloutTimeout, ProbeTimeout: defaultProbeTimeout, ConnectTimeout: defaultConnectTimeout}
	if env := os.Getenv(fleetEnv); env != "" {
		if !labelValueRE.MatchString(env) {
			resp.Diagnostics.AddAttributeError(path.Root("fleet"), "Invalid fleet name",
				"The "+fleetEnv+" environment variable must be a valid Kubernetes label value of at most 63 characters.")
			return
		}
		cfg.Fleet = env
	}
	if !m.Fleet.IsNull() && !m.Fleet.IsUnknown() {
		cfg.Fleet = m.Fleet.ValueString()
	}
	if !m.FieldManager.IsNull() && !m.FieldManager.IsUnknown() {
		cfg.FieldManager = m.FieldManager.ValueString()
	}
	if !m.DefaultTimeout.IsNull() && !m.DefaultTimeout.IsUnknown() {
		d, err := time.ParseDuration(m.DefaultTimeout.ValueString())
		if err != nil || d <= 0 {
			resp.Diagnostics.AddAttributeError(path.Root("default_timeout"), "Invalid duration", "Want a positive Go duration such as 5m or 90s.")
			return
		}
		cfg.RolloutTimeout = d
	}
	if !m.ProbeTimeout.IsNull() && !m.ProbeTimeout.IsUnknown() {
		d, err := time.ParseDuration(m.ProbeTimeout.ValueString())
		if err != nil || d <= 0 {
			resp.Diagnostics.AddAttributeError(path.Root("member_probe_timeout"), "Invalid duration", "Want a positive Go duration such as 3s.")
			return
		}
		cfg.ProbeTimeout = d
	}
	if !m.ConnectTimeout.IsNull() && !m.ConnectTimeout.IsUnknown() {
		d, err := time.ParseDuration(m.ConnectTimeout.ValueString())
		if err != nil || d <= 0 {
			resp.Diagnostics.AddAttributeError(path.Root("member_connect_timeout"), "Invalid duration", "Want a positive Go duration such as 1500ms.")
			return
		}
		cfg.ConnectTimeout = d
	}
	if !m.ApplyParallelism.IsNull() && !m.ApplyParallelism.IsUnknown() {
		cfg.ApplyParallelism = int(m.ApplyParallelism.ValueInt64())
	}
	var kinds []string
	resp.Diagnostics.Append(m.SensitiveKinds.ElementsAs(ctx, &kinds, false)...)
	var err error
	if cfg.SensitiveKinds, err = parseSensitiveKinds(kinds); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("sensitive_kinds"), "Invalid sensitive kind", err.Error())
	}
	cfg.Trusted, err = trustedFromConfig(ctx, m.TrustedExec)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("trusted_exec"), "Invalid trusted connections", err.Error())
	}
	if cfg.Trusted.overrides, err = trustedOverridesFromConfig(ctx, m.TrustedOverrides); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("trusted_connection_overrides"), "Invalid trusted connection overrides", err.Error())
	}
	if resp.Diagnostics.HasError() {
		return
	}
	eng, engErr := engine.New(engine.Options{Fleet: cfg.Fleet, FieldManager: cfg.FieldManager, Parallelism: cfg.ApplyParallelism, ProbeTimeout: cfg.ProbeTimeout, ConnectTimeout: cfg.ConnectTimeout})
	if engErr != nil {
		resp.Diagnostics.AddError("Cannot start the flotilla engine", engErr.Error())
		return
	}
	tflog.Debug(ctx, "configured flotilla provider", map[string]any{"fleet": cfg.Fleet, "field_manager": cfg.FieldManager})
	data := &providerData{Config: cfg, Engine: eng}
	resp.ResourceData = data
	resp.DataSourceData = data
}

// Resources implements provider.Provider: it lists the resource types.
func (p *flotillaProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newClusterResource,
		newPropagationPolicyResource,
		newClusterPropagationPolicyResource,
		newOverridePolicyResource,
		newClusterOverridePolicyResource,
		newResourceInterpreterResource,
		newFederatedResourceQuotaResource,
		newManifestResource,
	}
}

// DataSources implements provider.Provider: it lists the data sources.
func (p *flotillaProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newPlacementDataSource, newClusterStatusDataSource}
}

// Functions implements provider.ProviderWithFunctions: it lists the provider functions.
func (p *flotillaProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{newDecodeManifestsFunction}
}

// labelValueRE accepts a non-empty Kubernetes label value (at most 63 characters).
var labelValueRE = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// providerDataFrom unwraps the data Configure handed over. It returns nil,
// with no diagnostic, before the provider is configured (Terraform calls
// some methods early).
func providerDataFrom(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil
	}
	pd, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *providerData, got %T. Please report this issue to the provider developers.", data))
		return nil
	}
	return pd
}

// durationValidator accepts a positive Go duration.
type durationValidator struct{}

// Description implements the validator or plan modifier interface.
func (durationValidator) Description(context.Context) string {
	return "a positive Go duration such as 5m"
}

// MarkdownDescription implements the validator or plan modifier interface.
func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

// ValidateString implements validator.String.
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(req.ConfigValue.ValueString()); err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%q is not a positive Go duration such as 5m or 90s.", req.ConfigValue.ValueString()))
	}
}
