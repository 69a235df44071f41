package fleetview

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// SearchPrefix is where the search cache is served: below it, the path of
// a list or watch as a member serves it, e.g.
// SearchPrefix+"/apis/apps/v1/namespaces/default/deployments". A client
// whose Host ends in it (kubectl --server, client-go) reads the cache as
// if it were one cluster holding every member's objects.
const SearchPrefix = "/apis/" + Group + "/" + Version + "/search/cache"

// Field selectors the cache answers, as a member does for every kind.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// searchRequest is a parsed list or watch of the cache.
type searchRequest struct {
	gvr       schema.GroupVersionResource
	namespace string
	watch     bool
	labels    labels.Selector
	fields    fields.Selector
	timeout   time.Duration
	// table is set when the client asks for a meta.k8s.io/v1 Table (as
	// kubectl get does), include for what each row carries of its object.
	table   bool
	include metav1.IncludeObjectPolicy
}

// parseSearch parses a request below SearchPrefix.
func parseSearch(r *http.Request) (searchRequest, error) {
	var sr searchRequest
	if r.Method != http.MethodGet {
		return sr, apierrors.NewMethodNotSupported(schema.GroupResource{Group: Group, Resource: "search"}, r.Method)
	}
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, SearchPrefix), "/")
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		sr.gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		sr.gvr.Group, sr.gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return sr, apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: "search"}, rest)
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		sr.namespace, parts = parts[1], parts[2:]
	}
	if len(parts) != 1 || parts[0] == "" {
		return sr, apierrors.NewBadRequest(fmt.Sprintf("path %q: the search cache serves lists and watches of a resource "+
			"(a get by name is ambiguous across clusters: list with fieldSelector=metadata.name=<name>)", r.URL.Path))
	}
	sr.gvr.Resource = parts[0]
	q := r.URL.Query()
	sr.watch = q.Get("watch") == "true" || q.Get("watch") == "1"
	var err error
	if sr.labels, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return sr, apierrors.NewBadRequest(fmt.Sprintf("labelSelector %q: %v", q.Get("labelSelector"), err))
	}
	if sr.fields, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return sr, apierrors.NewBadRequest(fmt.Sprintf("fieldSelector %q: %v", q.Get("fieldSelector"), err))
	}
	for _, req := range sr.fields.Requirements() {
		if req.Field != fieldName && req.Field != fieldNamespace {
			return sr, apierrors.NewBadRequest(fmt.Sprintf("fieldSelector %q: field %q is not supported by the search cache (only %s and %s)",
				q.Get("fieldSelector"), req.Field, fieldName, fieldNamespace))
		}
	}
	if sr.include, err = parseInclude(q.Get("includeObject")); err != nil {
		return sr, apierrors.NewBadRequest(err.Error())
	}
	// A watch is served as events of objects; only a list becomes a table.
	sr.table = !sr.watch && wantsTable(r.Header.Get("Accept"))
	if t := q.Get("timeoutSeconds"); t != "" {
		secs, err := strconv.Atoi(t)
		if err != nil || secs < 0 {
			return sr, apierrors.NewBadRequest(fmt.Sprintf("timeoutSeconds %q: want a whole number of seconds", t))
		}
		sr.timeout = time.Duration(secs) * time.Second
	}
	return sr, nil
}

// matches applies the request's selectors to o.
func (sr *searchRequest) matches(o *cachedObject) bool {
	if !sr.labels.Empty() && !sr.labels.Matches(labels.Set(o.labels)) {
		return false
	}
	return sr.fields.Empty() || sr.fields.Matches(fields.Set{fieldName: o.name, fieldNamespace: o.namespace})
}

// access decides, per namespace, whether the requester may read objects of
// the request's resource there: the host's answer to a SubjectAccessReview
// for the request's verb (list, or watch for a watch) on that resource in
// that namespace (the whole cluster for a cluster-scoped kind). A right
// over all namespaces is asked once and covers every namespace. The
// authorizer is the delegating one, whose answers are cached for seconds.
type access struct {
	ctx       context.Context
	authz     authorizer.Authorizer
	requester user.Info
	verb      string
	gvr       schema.GroupVersionResource
	all       bool
	decided   map[string]bool
}

func newAccess(ctx context.Context, authz authorizer.Authorizer, requester user.Info, verb string, gvr schema.GroupVersionResource) *access {
	a := &access{ctx: ctx, authz: authz, requester: requester, verb: verb, gvr: gvr, decided: map[string]bool{}}
	a.all = a.ask("")
	return a
}

// allowed reports whether objects in namespace may be shown. A watch
// asks again for each event (memoize=false), so a revoked right takes
// effect within the authorizer's cache time.
func (a *access) allowed(namespace string, memoize bool) bool {
	if a.all {
		return true
	}
	if namespace == "" {
		// A cluster-scoped object: only the cluster-wide right covers it.
		return false
	}
	if d, ok := a.decided[namespace]; ok && memoize {
		return d
	}
	d := a.ask(namespace)
	a.decided[namespace] = d
	return d
}

func (a *access) ask(namespace string) bool {
	decision, _, err := a.authz.Authorize(a.ctx, authorizer.AttributesRecord{
		User: a.requester, Verb: a.verb, Namespace: namespace,
		APIGroup: a.gvr.Group, APIVersion: a.gvr.Version, Resource: a.gvr.Resource, ResourceRequest: true,
	})
	return err == nil && decision == authorizer.DecisionAllow
}

// serveSearch answers a list or watch of the search cache with the
// objects of the namespaces the requester may read.
func (s *Server) serveSearch(w http.ResponseWriter, r *http.Request) {
	if s.opts.Search == nil || s.authz == nil {
		writeError(w, r, apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: "search"}, "cache"))
		return
	}
	requester, ok := request.UserFrom(r.Context())
	if !ok || requester.GetName() == "" {
		writeError(w, r, apierrors.NewUnauthorized("no user in the request"))
		return
	}
	sr, err := parseSearch(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if sr.watch {
		s.serveSearchWatch(w, r, &sr, requester)
		return
	}
	gvk, namespaced, objs, ok := s.opts.Search.snapshot(sr.gvr, sr.namespace)
	if !ok {
		writeError(w, r, notCached(sr.gvr))
		return
	}
	acc := newAccess(r.Context(), s.authz, requester, "list", sr.gvr)
	if !namespaced && !acc.all {
		writeError(w, r, forbidden(requester, "list", sr.gvr, ""))
		return
	}
	if sr.namespace != "" && !acc.allowed(sr.namespace, true) {
		writeError(w, r, forbidden(requester, "list", sr.gvr, sr.namespace))
		return
	}
	// objs is the cache's shared, sorted slice: filter into a new one.
	shown := make([]*cachedObject, 0, len(objs))
	for _, o := range objs {
		if sr.matches(o) && acc.allowed(o.namespace, true) {
			shown = append(shown, o)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	if sr.table {
		w.Header().Set("Content-Type", tableContentType)
		_ = tableWriter{gvk: gvk, include: sr.include, now: time.Now()}.write(w, shown)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	writeList(w, gvk, shown)
}

// cmpObjects orders by namespace, name, then cluster, as kubectl lists.
func cmpObjects(a, b *cachedObject) int {
	if c := strings.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	return strings.Compare(a.cluster, b.cluster)
}

// writeList writes a <Kind>List of objs, through a buffer so 100,000
// objects are not 200,000 small writes. Its resourceVersion is empty:
// the objects come from several members, whose resource versions do not
// compare, and a watch starts from the current state anyway.
func writeList(out http.ResponseWriter, gvk schema.GroupVersionKind, objs []*cachedObject) {
	w := bufio.NewWriterSize(out, 64<<10)
	defer func() { _ = w.Flush() }()
	_, _ = fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":""},"items":[`, gvk.Kind+"List", gvk.GroupVersion().String())
	for i, o := range objs {
		if i > 0 {
			_, _ = w.Write([]byte{','})
		}
		_, _ = w.Write(o.raw)
	}
	_, _ = w.Write([]byte("]}\n"))
}

// serveSearchWatch streams the current objects as ADDED, then the cache's
// changes, each shown only when its namespace may be watched; it ends with
// timeoutSeconds, the client, or when the cache drops the watch (its
// members changed, or it fell too far behind), and the client watches
// again.
func (s *Server) serveSearchWatch(w http.ResponseWriter, r *http.Request, sr *searchRequest, requester user.Info) {
	ctx := r.Context()
	acc := newAccess(ctx, s.authz, requester, "watch", sr.gvr)
	if sr.namespace != "" && !acc.allowed(sr.namespace, true) {
		writeError(w, r, forbidden(requester, "watch", sr.gvr, sr.namespace))
		return
	}
	wt, current, namespaced, ok := s.opts.Search.watch(sr.gvr)
	if !ok {
		writeError(w, r, notCached(sr.gvr))
		return
	}
	defer s.opts.Search.unwatch(sr.gvr, wt)
	if !namespaced && !acc.all {
		writeError(w, r, forbidden(requester, "watch", sr.gvr, ""))
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	send := func(typ string, o *cachedObject, memoize bool) bool {
		if (sr.namespace != "" && o.namespace != sr.namespace) || !sr.matches(o) || !acc.allowed(o.namespace, memoize) {
			return true
		}
		if err := enc.Encode(struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}{typ, o.raw}); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	slices.SortFunc(current, cmpObjects)
	for _, o := range current {
		if !send(eventAdded, o, true) {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	var timeout <-chan time.Time
	if sr.timeout > 0 {
		t := time.NewTimer(sr.timeout)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout:
			return
		case <-wt.done:
			return
		case ev := <-wt.events:
			if !send(ev.typ, ev.obj, false) {
				return
			}
		}
	}
}

func notCached(gvr schema.GroupVersionResource) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: "search"},
		fmt.Sprintf("%s: no ResourceRegistry caches this resource", gvr.GroupResource()))
}

func forbidden(requester user.Info, verb string, gvr schema.GroupVersionResource, namespace string) error {
	where := "at the cluster scope"
	if namespace != "" {
		where = "in namespace " + namespace
	}
	return apierrors.NewForbidden(gvr.GroupResource(), "",
		fmt.Errorf("user %q cannot %s %s %s on the host, so the search cache shows none", requester.GetName(), verb, gvr.GroupResource(), where))
}
