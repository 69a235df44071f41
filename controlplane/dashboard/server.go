package dashboard

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// FragmentHeader asks for the page's main section alone: the embedded
// script polls with it to refresh the page in place.
const FragmentHeader = "X-Dashboard-Fragment"

// DefaultRefresh is how often an open page refreshes its main section.
const DefaultRefresh = 5 * time.Second

// Server renders the dashboard's pages from a reader of the host,
// normally the control plane's informer cache, for the users the host
// authenticates and authorizes.
type Server struct {
	reader client.Reader
	// templates is the informer cache templates are read from; api reads
	// one directly while its kind's informer has not synced yet.
	templates TemplateCache
	api       client.Reader
	mapper    apimeta.RESTMapper
	watches   *Watches
	probes    ProbeSource
	leading   func() bool
	assets    *assets
	access    *access
	pages     map[string]*template.Template
	refresh   time.Duration
	now       func() time.Time
}

// Sources are what the dashboard reads.
type Sources struct {
	// Cache is a reader of the host, normally the control plane's
	// informer cache, for Clusters, ResourceBindings and Works.
	Cache client.Reader
	// Templates is the informer cache resource templates are read from
	// (the rendered diff, the label filter), normally the control plane's;
	// API reads one from the host directly while its kind's informer has
	// not synced yet; Mapper names their kinds' versions and resources.
	// Without Templates, API and Mapper a workload's page shows no
	// rendered diff; without Templates and Mapper the label filter matches
	// the bindings' labels only.
	Templates TemplateCache
	API       client.Reader
	Mapper    apimeta.RESTMapper
	// Watches are flotilla's incident events and the Pull clusters'
	// Leases; without them the events page is empty.
	Watches *Watches
	// Probes are the Push clusters' last successful probes, kept in memory
	// by the cluster status controller of this process; Leading says
	// whether this process leads (runs that controller). Without them the
	// fleet page says a Push cluster is probed by the leader.
	Probes  ProbeSource
	Leading func() bool
}

// ProbeSource says when a Push cluster last answered its probe Ready.
type ProbeSource interface {
	// LastProbe is that time; false when unknown.
	LastProbe(cluster string) (time.Time, bool)
}

// New returns the dashboard of the host that cfg and httpClient reach
// (for TokenReviews and SubjectAccessReviews; a nil httpClient is made
// from cfg), reading the fleet from src and refreshing open pages every
// refresh (DefaultRefresh when 0).
func New(cfg *rest.Config, httpClient *http.Client, src Sources, refresh time.Duration) (*Server, error) {
	a, err := newAccess(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("dashboard: assets: %w", err)
	}
	files, err := loadAssets(static)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages(files)
	if err != nil {
		return nil, err
	}
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	return &Server{reader: src.Cache, templates: src.Templates, api: src.API, mapper: src.Mapper, watches: src.Watches,
		probes: src.Probes, leading: src.Leading, access: a, assets: files, pages: pages, refresh: refresh, now: time.Now}, nil
}

func parsePages(files *assets) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"pct":   func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
		"asset": files.url,
	}
	pages := map[string]*template.Template{}
	for _, name := range []string{"fleet", "workloads", "workload", "rollouts", "events", "refused"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: parse page %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// Handler serves every page and asset behind the host's authentication and
// authorization, with headers that keep pages out of caches and frames and
// let only the embedded script run.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", http.RedirectHandler("/fleet", http.StatusFound))
	mux.HandleFunc("GET /fleet", s.fleet)
	mux.HandleFunc("GET /workloads", s.workloads)
	mux.HandleFunc("GET /workloads/{namespace}/{name}", s.workload)
	mux.HandleFunc("GET /rollouts", s.rollouts)
	mux.HandleFunc("GET /events", s.eventsPage)
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/{file}", s.assets.serve(http.StripPrefix("/static/", http.FileServerFS(static))))
	return secureHeaders(s.access.gate(mux))
}

func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Vary", FragmentHeader)
		next.ServeHTTP(w, r)
	})
}

// page is what the layout gets.
type page struct {
	Title, Nav, User string
	Rendered         string
	Refresh          int
	View             any
	// Refusal says what the user may not read, on the refused page.
	Refusal string
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.User = userOf(r.Context()).GetName()
	p.Rendered = s.now().UTC().Format("15:04:05Z")
	p.Refresh = int(s.refresh / time.Millisecond)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	tmpl := "layout"
	if r.Header.Get(FragmentHeader) == "main" {
		tmpl = "main"
	}
	var b strings.Builder
	if err := s.pages[name].ExecuteTemplate(&b, tmpl, p); err != nil {
		http.Error(w, "render page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, nav, what string) {
	s.render(w, r, http.StatusForbidden, "refused", page{Title: "Not allowed", Nav: nav, Refusal: what})
}

func pageNumber(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil {
		return 1
	}
	return n
}

func (s *Server) clusters(r *http.Request) ([]clusterv1.Cluster, error) {
	var list clusterv1.ClusterList
	// The pages only read what they list: no deep copy of the cache.
	if err := s.reader.List(r.Context(), &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	return list.Items, nil
}

func (s *Server) fleet(w http.ResponseWriter, r *http.Request) {
	u := userOf(r.Context())
	if !s.access.canList(r.Context(), u, clustersResource(), "") {
		s.refuse(w, r, "fleet", "list clusters ("+clustersResource().group+")")
		return
	}
	clusters, err := s.clusters(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	v := buildFleet(clusters, strings.TrimSpace(r.URL.Query().Get("q")), pageNumber(r), s.now(), heartbeats{renewed: s.renewed, probed: s.probed, leading: s.leading != nil && s.leading()})
	s.render(w, r, http.StatusOK, "fleet", page{Title: "Fleet", Nav: "fleet", View: v})
}

// renewed is when the agent of a Pull cluster last renewed its Lease.
func (s *Server) renewed(cluster string) *time.Time {
	l := s.watches.Lease(cluster)
	if l == nil || l.Spec.RenewTime == nil {
		return nil
	}
	return &l.Spec.RenewTime.Time
}

// probed is when a Push cluster last answered this process' probe Ready.
func (s *Server) probed(cluster string) *time.Time {
	if s.probes == nil {
		return nil
	}
	if t, ok := s.probes.LastProbe(cluster); ok {
		return &t
	}
	return nil
}

// visibleNamespaces answers, per namespace, whether u may list bindings
// there: everywhere when they may list them in all namespaces, else per
// namespace (each answer cached by the authorizer).
func (s *Server) visibleNamespaces(r *http.Request, u user.Info) func(string) bool {
	if s.access.canList(r.Context(), u, bindingsResource(), "") {
		return func(string) bool { return true }
	}
	return func(ns string) bool { return s.access.canList(r.Context(), u, bindingsResource(), ns) }
}

func (s *Server) palette(r *http.Request) map[string]string {
	// Colours only: cluster names come from the bindings the user may read.
	clusters, err := s.clusters(r)
	if err != nil {
		return nil
	}
	return colors(clusters)
}

func (s *Server) workloads(w http.ResponseWriter, r *http.Request) {
	var list workv1.ResourceBindingList
	if err := s.reader.List(r.Context(), &list, client.UnsafeDisableDeepCopy); err != nil {
		http.Error(w, fmt.Sprintf("list resourcebindings: %v", err), http.StatusServiceUnavailable)
		return
	}
	q := r.URL.Query()
	status, typed := http.StatusOK, strings.TrimSpace(q.Get("labels"))
	selector, err := labels.Parse(typed)
	if err != nil {
		// Nothing matches a selector that does not parse: the page says why
		// rather than showing everything as if it had been applied.
		status, selector = http.StatusBadRequest, labels.Nothing()
	}
	u := userOf(r.Context())
	v := buildWorkloads(list.Items, s.visibleNamespaces(r, u), s.palette(r),
		strings.TrimSpace(q.Get("namespace")), strings.TrimSpace(q.Get("q")), s.labelMatcher(r.Context(), u, selector), pageNumber(r))
	v.Labels = typed
	if err != nil {
		v.LabelsError = fmt.Sprintf("label selector %q: %v", typed, err)
	}
	s.render(w, r, status, "workloads", page{Title: "Workloads", Nav: "workloads", View: v})
}

func (s *Server) workload(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if !s.access.canGet(r.Context(), userOf(r.Context()), bindingsResource(), ns, name) {
		// The same answer whether or not the binding exists: a refusal
		// tells nothing about what is there.
		s.refuse(w, r, "workloads", fmt.Sprintf("get resourcebindings (%s) in namespace %s", bindingsResource().group, ns))
		return
	}
	var rb workv1.ResourceBinding
	if err := s.reader.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, &rb); err != nil {
		if client.IgnoreNotFound(err) == nil {
			http.Error(w, fmt.Sprintf("no workload %s/%s", ns, name), http.StatusNotFound)
			return
		}
		http.Error(w, fmt.Sprintf("get resourcebinding %s/%s: %v", ns, name, err), http.StatusServiceUnavailable)
		return
	}
	palette := s.palette(r)
	v := buildWorkload(&rb, palette, s.now())
	v.Diffs, v.DiffNote = s.renderedDiffs(r.Context(), userOf(r.Context()), &rb, palette)
	s.render(w, r, http.StatusOK, "workload", page{Title: rb.Spec.Resource.Name, Nav: "workloads", View: v})
}

func (s *Server) rollouts(w http.ResponseWriter, r *http.Request) {
	var list workv1.ResourceBindingList
	if err := s.reader.List(r.Context(), &list, client.UnsafeDisableDeepCopy); err != nil {
		http.Error(w, fmt.Sprintf("list resourcebindings: %v", err), http.StatusServiceUnavailable)
		return
	}
	u := userOf(r.Context())
	v := buildRollouts(list.Items, s.visibleNamespaces(r, u), strings.TrimSpace(r.URL.Query().Get("q")), pageNumber(r), s.now(), s.gates(r, u))
	s.render(w, r, http.StatusOK, "rollouts", page{Title: "Rollouts", Nav: "rollouts", View: v})
}
