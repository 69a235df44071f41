package terraform

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// Diagnostic summaries of invalid cluster configuration.
const (
	summaryInvalidCluster    = "Invalid cluster"
	summaryInvalidConnection = "Invalid connection"
	summaryMissingConnection = "Missing connection"
)

// validate checks the known parts of a flotilla_cluster value: the name,
// the facts (with Karmada's cluster validation) and the connection.
// Unknown parts are checked once they are known, at apply. at prefixes the
// attribute paths of the diagnostics.
func (m clusterModel) validate(ctx context.Context, at path.Path) diag.Diagnostics {
	diags := validateClusterName(m.Name, at)
	diags.Append(validateSyncMode(m.SyncMode, m.Name, at)...)
	diags.Append(m.factsModel.validate(ctx, m.Name, at)...)
	diags.Append(m.connectionModel.validate(ctx, m.Name, at)...)
	return diags
}

// clusterNamed describes the cluster in a diagnostic: `cluster "east"`,
// or just "the cluster" while its name is not known.
func clusterNamed(name types.String) string {
	if name.IsNull() || name.IsUnknown() {
		return "the cluster"
	}
	return fmt.Sprintf("cluster %q", name.ValueString())
}

// addAttributeError reports a problem with one attribute, naming the
// attribute and the cluster in the detail as well, since terraform only
// shows the source line of the attribute.
func addAttributeError(diags *diag.Diagnostics, p path.Path, summary string, name types.String, reason string) {
	diags.AddAttributeError(p, summary, fmt.Sprintf("Attribute %s of %s: %s.", p, clusterNamed(name), strings.TrimSuffix(reason, ".")))
}

func validateClusterName(name types.String, at path.Path) diag.Diagnostics {
	var diags diag.Diagnostics
	if name.IsNull() || name.IsUnknown() {
		return diags
	}
	if problems := api.ValidateClusterName(name.ValueString()); len(problems) > 0 {
		diags.AddAttributeError(at.AtName(clusterAttrName), summaryInvalidCluster, fmt.Sprintf(
			"Attribute %s: %q is not a valid cluster name: %s.", at.AtName(clusterAttrName), name.ValueString(), strings.Join(problems, "; ")))
	}
	return diags
}

// validateSyncMode refuses any sync_mode but Push: Terraform has no hub
// for an agent to pull from, so a Pull member belongs to continuous mode.
func validateSyncMode(mode, name types.String, at path.Path) diag.Diagnostics {
	var diags diag.Diagnostics
	if mode.IsNull() || mode.IsUnknown() || mode.ValueString() == string(api.Push) {
		return diags
	}
	reason := fmt.Sprintf("%q is not a sync mode: only Push is supported", mode.ValueString())
	if mode.ValueString() == string(api.Pull) {
		reason = "Pull is not supported by Terraform, which has no hub for an agent to pull from; a member Terraform " +
			"cannot reach is served by the continuous control plane (terraform-provider-flotilla controlplane) with a " +
			"Cluster of syncMode Pull and terraform-provider-flotilla agent in the member (docs/guides/pull-mode.md)"
	}
	addAttributeError(&diags, at.AtName(clusterAttrSyncMode), summaryInvalidCluster, name, reason)
	return diags
}

// validate runs Karmada's cluster validation over the facts once they are
// all known. The name is checked by validateClusterName.
func (f factsModel) validate(ctx context.Context, name types.String, at path.Path) diag.Diagnostics {
	facts, known, diags := f.facts(ctx)
	if !known {
		return diags
	}
	// A valid stand-in, so only the facts' problems are reported here.
	for _, fe := range api.ValidateCluster(new(clusterOf("facts", facts))) {
		p, ok := factPath(fe.Field, at)
		if !ok {
			continue
		}
		addAttributeError(&diags, p, summaryInvalidCluster, name, fe.ErrorBody())
	}
	return diags
}

// factFields maps the Karmada field names of the facts to attribute names.
var factFields = map[string]string{
	"metadata.labels": clusterAttrLabels,
	"spec.provider":   clusterAttrCloudProvider,
	"spec.region":     clusterAttrRegion,
	"spec.zones":      clusterAttrZones,
	"spec.taints":     clusterAttrTaints,
}

var fieldStepRE = regexp.MustCompile(`^\[(\d+)\]|^\.([A-Za-z]+)|^\[([^\]]*)\]`)

// factPath maps a field path of api.ValidateCluster ("spec.taints[1].effect")
// to the attribute path (taints[1].effect). ok is false for fields that are
// not facts.
func factPath(field string, at path.Path) (path.Path, bool) {
	for karmada, attrName := range factFields {
		rest, found := strings.CutPrefix(field, karmada)
		if !found || (rest != "" && rest[0] != '.' && rest[0] != '[') {
			continue
		}
		p := at.AtName(attrName)
		for rest != "" {
			m := fieldStepRE.FindStringSubmatch(rest)
			if m == nil {
				break
			}
			switch {
			case m[1] != "":
				i, _ := strconv.Atoi(m[1])
				p = p.AtListIndex(i)
			case m[2] != "":
				p = p.AtName(m[2])
			default:
				p = p.AtMapKey(m[3])
			}
			rest = rest[len(m[0]):]
		}
		return p, true
	}
	return path.Empty(), false
}

// presence is what the configuration says about an attribute.
type presence int

const (
	attrAbsent presence = iota
	attrPresent
	attrUnknown
)

func presenceOf(v attr.Value) presence {
	switch {
	case v.IsUnknown():
		return attrUnknown
	case v.IsNull():
		return attrAbsent
	}
	return attrPresent
}

// validate checks the connection. Its shape (which ways of connecting are
// set) is checked on what is known, treating an unknown attribute as
// undecided; the rest, by member.Connection.Validate, once every attribute
// is known.
func (c connectionModel) validate(ctx context.Context, name types.String, at path.Path) diag.Diagnostics {
	diags := c.validateShape(name, at)
	if diags.HasError() {
		return diags
	}
	conn, known, d := c.connection(ctx)
	if diags.Append(d...); !known || diags.HasError() {
		return diags
	}
	if err := conn.Validate(); err != nil {
		var invalid *member.ValidationError
		if !errors.As(err, &invalid) {
			diags.AddAttributeError(at, summaryInvalidConnection, err.Error())
			return diags
		}
		addAttributeError(&diags, connectionPath(invalid.Field, at), summaryInvalidConnection, name, connectionReason(invalid.Reason))
	}
	return diags
}

// validateShape checks that exactly one way of connecting is set, in this
// resource's terms: kubeconfig (with exactly one of path and raw, and no
// host credentials) or host (with credentials).
func (c connectionModel) validateShape(name types.String, at path.Path) diag.Diagnostics {
	var diags diag.Diagnostics
	kubeconfig, host := presenceOf(c.Kubeconfig), presenceOf(c.Host)
	switch {
	case kubeconfig == attrPresent && host == attrPresent:
		addAttributeError(&diags, at.AtName(connAttrHost), summaryInvalidConnection, name,
			"cannot be combined with kubeconfig: set exactly one of kubeconfig or host")
		return diags
	case kubeconfig == attrAbsent && host == attrAbsent:
		diags.AddAttributeError(at, summaryMissingConnection, fmt.Sprintf("%s has no way to connect: set kubeconfig = { path "+
			"or raw, and optionally context }, or host with one of token, client_certificate and client_key, or exec.",
			capitalize(clusterNamed(name))))
		return diags
	}
	hostOnly := []struct {
		name string
		v    attr.Value
	}{
		{connAttrToken, c.Token}, {connAttrClientCert, c.ClientCertificate}, {connAttrClientKey, c.ClientKey},
		{connAttrExec, c.Exec}, {connAttrClusterCA, c.ClusterCACertificate},
	}
	if kubeconfig == attrPresent {
		k := c.Kubeconfig.Attributes()
		p, raw := presenceOf(k[connAttrPath]), presenceOf(k[connAttrRaw])
		switch {
		case p == attrPresent && raw == attrPresent:
			addAttributeError(&diags, at.AtName(connAttrKubeconfig).AtName(connAttrRaw), summaryInvalidConnection, name,
				"cannot be combined with kubeconfig.path: set exactly one of path or raw")
		case p == attrAbsent && raw == attrAbsent:
			addAttributeError(&diags, at.AtName(connAttrKubeconfig), summaryInvalidConnection, name,
				"needs exactly one of path (a kubeconfig file) or raw (its contents)")
		}
		for _, a := range hostOnly {
			if presenceOf(a.v) == attrPresent {
				addAttributeError(&diags, at.AtName(a.name), summaryInvalidConnection, name,
					"is only used with host; with kubeconfig, the kubeconfig holds the credentials and the CA")
			}
		}
	}
	if host == attrPresent {
		credentials := attrAbsent
		for _, a := range hostOnly[:4] {
			credentials = max(credentials, presenceOf(a.v))
		}
		if credentials == attrAbsent {
			addAttributeError(&diags, at.AtName(connAttrHost), summaryInvalidConnection, name,
				"needs credentials: set one of token, client_certificate with client_key, or exec")
		}
	}
	return diags
}

// connectionPath maps a member.ValidationError field to the attribute.
func connectionPath(field string, at path.Path) path.Path {
	switch field {
	case "kubeconfig_path":
		return at.AtName(connAttrKubeconfig).AtName(connAttrPath)
	case "kubeconfig":
		return at.AtName(connAttrKubeconfig).AtName(connAttrRaw)
	case "context":
		return at.AtName(connAttrKubeconfig).AtName(connAttrContext)
	}
	p := at
	for step := range strings.SplitSeq(field, ".") {
		p = p.AtName(step)
	}
	return p
}

// connectionReason rewrites member's field names in a reason to this
// resource's attribute names. Only kubeconfig_path differs in a way that can
// appear after validateShape has passed.
func connectionReason(reason string) string {
	return strings.ReplaceAll(reason, "kubeconfig_path", "kubeconfig.path")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
