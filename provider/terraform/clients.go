package terraform

import "github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"

// memberCache returns the member cache of the provider instance: the
// engine's, so every resource and data source shares one connection per member.
func (d *providerData) memberCache() *member.Cache { return d.Engine.Members() }
