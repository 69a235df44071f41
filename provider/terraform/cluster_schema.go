package terraform

import (
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Attribute names of flotilla_cluster and flotilla_cluster_status.
const (
	clusterAttrName          = "name"
	clusterAttrID            = "id"
	clusterAttrLabels        = "labels"
	clusterAttrCloudProvider = "cloud_provider"
	clusterAttrRegion        = "region"
	clusterAttrZones         = "zones"
	clusterAttrTaints        = "taints"
	clusterAttrSyncMode      = "sync_mode"

	connAttrKubeconfig    = "kubeconfig"
	connAttrPath          = "path"
	connAttrRaw           = "raw"
	connAttrContext       = "context"
	connAttrHost          = "host"
	connAttrToken         = "token"
	connAttrClientCert    = "client_certificate"
	connAttrClientKey     = "client_key"
	connAttrExec          = "exec"
	connAttrAPIVersion    = "api_version"
	connAttrCommand       = "command"
	connAttrArgs          = "args"
	connAttrEnv           = "env"
	connAttrClusterCA     = "cluster_ca_certificate"
	connAttrInsecure      = "insecure"
	connAttrTLSServerName = "tls_server_name"
	connAttrProxyURL      = "proxy_url"
)

// connAttrKind is the shape of a connection attribute.
type connAttrKind int

const (
	connString connAttrKind = iota
	connBool
	connStringList
	connStringMap
	connObject
)

// connAttr describes one connection attribute once, for both the resource
// and the data source schema (the framework has a schema package for each).
type connAttr struct {
	name        string
	kind        connAttrKind
	required    bool
	sensitive   bool
	description string
	// attrs are the nested attributes of a connObject.
	attrs []connAttr
}

// connectionAttrs are the ways of reaching a member, in the order the
// documentation lists them. Their names are member.Connection's field names,
// except that the kubeconfig ways are grouped in one object.
var connectionAttrs = []connAttr{
	{
		name: connAttrKubeconfig, kind: connObject,
		description: "Connect through a kubeconfig, as kubectl does: the credentials, CA and server come from it. " +
			"Set exactly one of `kubeconfig` or `host`. Prefer a kubeconfig context or an `exec` plugin over tokens: " +
			"they do not rotate in configuration, so references to this cluster stay stable.",
		attrs: []connAttr{
			{name: connAttrPath, kind: connString, description: "Path of a kubeconfig file; a leading `~/` is the home " +
				"directory. Only this file is read, never `$KUBECONFIG`. It is read when flotilla connects, so it may be " +
				"written earlier in the same apply. Set exactly one of `path` or `raw`."},
			{name: connAttrRaw, kind: connString, sensitive: true, description: "A whole kubeconfig, inline (for example " +
				"`file(\"admin.conf\")` or a module output). Sensitive. Set exactly one of `path` or `raw`."},
			{name: connAttrContext, kind: connString, description: "Context of the kubeconfig to use. Defaults to its " +
				"`current-context`."},
		},
	},
	{name: connAttrHost, kind: connString, description: "URL of the apiserver, for example `https://10.0.0.1:6443`; " +
		"`https://` is assumed when the scheme is left out, and plain `http` is refused because it would send the " +
		"credentials in the clear. Needs exactly one of `token`, `client_certificate` with `client_key`, or `exec`."},
	{name: connAttrToken, kind: connString, sensitive: true, description: "Bearer token, with `host`. Sensitive. A token " +
		"that changes on every run makes every `flotilla_manifest` that references this cluster show an update; " +
		"prefer `exec`."},
	{name: connAttrClientCert, kind: connString, description: "PEM client certificate, with `host` and `client_key`."},
	{name: connAttrClientKey, kind: connString, sensitive: true, description: "PEM private key of `client_certificate`. Sensitive."},
	{
		name: connAttrExec, kind: connObject,
		description: "Credential plugin that prints an ExecCredential, with `host`, as a kubeconfig's `user.exec`. " +
			"It never talks to a terminal. Useful for short-lived cloud tokens (`aws eks get-token`, `gke-gcloud-auth-plugin`).",
		attrs: []connAttr{
			{name: connAttrAPIVersion, kind: connString, description: "ExecCredential version the plugin speaks: " +
				"`client.authentication.k8s.io/v1` (the default) or `client.authentication.k8s.io/v1beta1`."},
			{name: connAttrCommand, kind: connString, required: true, description: "The executable; a leading `~/` is the " +
				"home directory, a bare name is looked up in `$PATH`."},
			{name: connAttrArgs, kind: connStringList, sensitive: true, description: "Arguments of the command. " +
				"Sensitive, since plugins take secrets as arguments too (a `--token`, a role session name)."},
			{name: connAttrEnv, kind: connStringMap, sensitive: true, description: "Environment variables added to the " +
				"plugin's environment. Sensitive."},
		},
	},
	{name: connAttrClusterCA, kind: connString, description: "PEM CA bundle that signed the apiserver's serving " +
		"certificate, with `host`. When left out, the system's roots verify it, as with kubectl."},
	{name: connAttrInsecure, kind: connBool, description: "Turn off verification of the apiserver's serving certificate. " +
		"Only takes effect when set explicitly to `true`, and is refused together with `cluster_ca_certificate`. " +
		"Applies to `kubeconfig` too, overriding it."},
	{name: connAttrTLSServerName, kind: connString, description: "Name the serving certificate is checked against, " +
		"when it differs from the host. Overrides the kubeconfig's."},
	{name: connAttrProxyURL, kind: connString, sensitive: true, description: "An `http`, `https` or `socks5` proxy to " +
		"reach the apiserver through. Sensitive, since it may carry a password. Overrides the kubeconfig's."},
}

func (a connAttr) resourceAttribute() rschema.Attribute {
	optional := !a.required
	switch a.kind {
	case connBool:
		return rschema.BoolAttribute{MarkdownDescription: a.description, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	case connStringList:
		return rschema.ListAttribute{MarkdownDescription: a.description, ElementType: types.StringType, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	case connStringMap:
		return rschema.MapAttribute{MarkdownDescription: a.description, ElementType: types.StringType, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	case connObject:
		attrs := map[string]rschema.Attribute{}
		for _, n := range a.attrs {
			attrs[n.name] = n.resourceAttribute()
		}
		return rschema.SingleNestedAttribute{MarkdownDescription: a.description, Attributes: attrs, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	}
	return rschema.StringAttribute{MarkdownDescription: a.description, Required: a.required, Optional: optional, Sensitive: a.sensitive}
}

func (a connAttr) dataSourceAttribute() dschema.Attribute {
	optional := !a.required
	switch a.kind {
	case connBool:
		return dschema.BoolAttribute{MarkdownDescription: a.description, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	case connStringList:
		return dschema.ListAttribute{MarkdownDescription: a.description, ElementType: types.StringType, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	case connStringMap:
		return dschema.MapAttribute{MarkdownDescription: a.description, ElementType: types.StringType, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	case connObject:
		attrs := map[string]dschema.Attribute{}
		for _, n := range a.attrs {
			attrs[n.name] = n.dataSourceAttribute()
		}
		return dschema.SingleNestedAttribute{MarkdownDescription: a.description, Attributes: attrs, Required: a.required, Optional: optional, Sensitive: a.sensitive}
	}
	return dschema.StringAttribute{MarkdownDescription: a.description, Required: a.required, Optional: optional, Sensitive: a.sensitive}
}

// resourceConnectionAttributes adds the connection attributes to a
// resource schema's attributes.
func resourceConnectionAttributes(into map[string]rschema.Attribute) {
	for _, a := range connectionAttrs {
		into[a.name] = a.resourceAttribute()
	}
}

// dataSourceConnectionAttributes adds the connection attributes to a data
// source schema's attributes.
func dataSourceConnectionAttributes(into map[string]dschema.Attribute) {
	for _, a := range connectionAttrs {
		into[a.name] = a.dataSourceAttribute()
	}
}

// Descriptions shared by the resource and the data source.
const (
	clusterNameDescription = "Name of the member cluster in the fleet: a DNS-1123 label of at most 48 characters " +
		"(Karmada's limit). Placement, `cluster_names` selectors and `flotilla_manifest`'s `placement` and `rendered` " +
		"use it."
	taintEffects = "`NoSchedule`, `PreferNoSchedule` or `NoExecute`"
)
