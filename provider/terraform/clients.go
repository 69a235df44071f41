package terraform

import (
	"sync"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// memberCaches gives each configured provider instance, i.e. each
// *providerData that Configure hands out, its one member.Cache, shared by
// that instance's flotilla_cluster resources and flotilla_cluster_status
// data sources. Two provider instances in one process (aliases, tests)
// never share clients.
//
// It stands in until the engine, which owns the instance's other member
// connections, exposes its cache; memberCache is the only reader, so the
// switch is one line there.
var memberCaches sync.Map // *providerData → *member.Cache

// memberCache returns the member cache of the provider instance d belongs
// to: the one owner of member connections in that instance.
func (d *providerData) memberCache() *member.Cache {
	if v, ok := memberCaches.Load(d); ok {
		return v.(*member.Cache)
	}
	v, _ := memberCaches.LoadOrStore(d, member.NewCache(member.CacheOptions{}))
	return v.(*member.Cache)
}
