package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// Defaults of Executor.
const (
	// DefaultFieldManager is the server-side apply field manager.
	DefaultFieldManager = "flotilla"
	// DefaultConcurrency is how many clusters are worked on at once.
	DefaultConcurrency = 8
	// DefaultObjectConcurrency is how many independent objects (same phase)
	// are sent to one cluster at once.
	DefaultObjectConcurrency = 4
	// DefaultEstablishTimeout bounds the wait for a CustomResourceDefinition
	// to become Established.
	DefaultEstablishTimeout = 30 * time.Second
)

// Target is what execution needs to reach one member cluster.
type Target struct {
	// Dynamic sends the requests.
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources; it is reset when a
	// CustomResourceDefinition changes or a kind is not found, so it must be
	// backed by discovery (restmapper.NewDeferredDiscoveryRESTMapper).
	Mapper apimeta.ResettableRESTMapper
	// Watched, when set, tells from a watch of the member's applied
	// objects whether one is still as the last apply left it, so applying
	// it again (a resync) reads nothing from the member (see ApplyCache).
	Watched AppliedWatch
}

// AppliedWatch answers from a watch of the objects flotilla applied to a
// member (member.Client.AppliedFields).
type AppliedWatch interface {
	// AppliedFields returns render.AppliedFieldsDigest of manager's
	// applied fields in the named object of resource gvr as the watch last
	// saw it; found is false when the watch does not hold it, ok false
	// when the watch cannot tell (not watched, not synced, failing).
	AppliedFields(gvr schema.GroupVersionResource, namespace, name, manager string) (digest string, found, ok bool)
}

// Connector returns the clients of a member cluster. An error means the
// cluster cannot be reached at all; every object for it then fails with it.
type Connector interface {
	Connect(ctx context.Context, cluster string) (Target, error)
}

// Targets is a fixed set of connected clusters by name; it is a Connector.
type Targets map[string]Target

// Connect returns the cluster's target, or api.ErrNotConnected.
func (t Targets) Connect(_ context.Context, cluster string) (Target, error) {
	target, ok := t[cluster]
	if !ok {
		return Target{}, api.ErrNotConnected
	}
	return target, nil
}

// Executor applies and removes works in member clusters for one fleet. Its
// zero fields take the defaults above; Clusters and Fleet are required. It
// is safe for concurrent use.
type Executor struct {
	// Clusters connects to members.
	Clusters Connector
	// Fleet is the fleet whose objects this executor owns; it must equal the
	// render.LabelFleet value of every object it applies.
	Fleet string
	// FieldManager is the server-side apply field manager; default "flotilla".
	FieldManager string
	// Concurrency bounds how many clusters are worked on at once; default 8.
	Concurrency int
	// ObjectConcurrency bounds how many objects of one ordering phase are
	// sent to one cluster at once; default 4.
	ObjectConcurrency int
	// EstablishTimeout bounds the wait for a CustomResourceDefinition to be
	// Established; default 30 s.
	EstablishTimeout time.Duration
	// Reads, when set, answers ObserveLive from cached lists (see ReadCache).
	Reads *ReadCache
	// RequestTimeout, when set, bounds each request to a member (a read,
	// an apply, a removal), below the caller's deadline for the whole call:
	// a member that accepts requests and never answers fails the call
	// within it (a *RequestTimeoutError), and the call's other objects for
	// that member fail at once. Zero leaves requests to the clients' own
	// timeout and the caller's context.
	RequestTimeout time.Duration
	// Namespaces, when set, remembers the member namespaces that exist
	// across calls (see NamespaceCache).
	Namespaces *NamespaceCache
	// Applied, when set, skips an apply that would repeat the last one onto
	// an unchanged member object (see ApplyCache).
	Applied *ApplyCache
	// Unreachable, when set, hears of each cluster a call finds it cannot
	// reach (a transport error: refused, reset, timed out; not the end of
	// the caller's context), once per call and cluster, so a caller that
	// makes many calls can stop sending the others to it.
	Unreachable func(cluster string, err error)
}

// ApplyRequest is one template's desired state across the fleet.
type ApplyRequest struct {
	// Template identifies the template. Every object must be the rendered
	// form of it (render.Work.Object): same kind, namespace and name, with
	// the ownership labels of the executor's fleet and AnnotationTemplate
	// equal to Template.String().
	Template api.TemplateRef
	// Objects maps a cluster name to the object to apply there.
	Objects map[string]*unstructured.Unstructured
	// Prune lists the clusters the template left: its object there is
	// deleted, or released when PreserveResourcesOnDeletion is set. A cluster
	// may not be in both Objects and Prune.
	Prune []string
	// ConflictResolution says what to do with an existing object in a member
	// that flotilla does not own: Abort (the default) refuses it, Overwrite
	// adopts it. An object of another flotilla fleet is always refused.
	ConflictResolution api.ConflictResolution
	// PreserveResourcesOnDeletion releases pruned objects instead of
	// deleting them: the object is released, not deleted.
	PreserveResourcesOnDeletion bool
	// RetainMemberFields leaves the fields the resource interpreter's
	// Retain operation gives to the member (spec.replicas of a workload
	// with the retain-replicas label) out of what is applied once the
	// object exists there. Both drivers set it; the synchronous one's
	// refresh reads those fields as declared (AsDeclared), so its plan
	// shows no change the apply would not make.
	RetainMemberFields bool
	// Interpreter decides the retained fields: the built-in rules, or nil
	// for them, extended by customizations (their retention scripts). A
	// failing script fails the apply to that cluster: nothing is applied.
	Interpreter *interpret.Interpreter
	// Karmada, when set, takes over the objects a stopped Karmada applied
	// for this template in the clusters it lists, without a write while
	// they already hold the rendered object (KarmadaAdoption).
	Karmada *KarmadaAdoption
}

// DeleteRequest removes one template's objects from the listed clusters.
type DeleteRequest struct {
	// Template identifies the template whose objects are removed.
	Template api.TemplateRef
	// Clusters are the clusters to remove it from.
	Clusters []string
	// PreserveResourcesOnDeletion releases the objects instead of deleting
	// them: flotilla's labels and annotations are removed, and so is its
	// field ownership; the object is released, not deleted.
	PreserveResourcesOnDeletion bool
	// Karmada is the template's take-over grant, as in ApplyRequest: an
	// object it covers is the template's even before flotilla's first
	// write puts its labels on it, so it is removed as Karmada would have
	// removed it.
	Karmada *KarmadaAdoption
}

// Action is what happened to one object in one cluster.
type Action string

// Actions reported in an Outcome.
const (
	// ActionApplied means the object was server-side applied; Changed says
	// whether the apply wrote anything.
	ActionApplied Action = "Applied"
	// ActionCreatedNamespace means flotilla created the missing namespace of
	// a namespaced object. Flotilla never deletes such a namespace.
	ActionCreatedNamespace Action = "CreatedNamespace"
	// ActionPruned means the object was deleted (background propagation).
	ActionPruned Action = "Pruned"
	// ActionReleased means flotilla's ownership labels, annotations and
	// field ownership were removed and the object left in place.
	ActionReleased Action = "Released"
	// ActionAbsent means there was nothing to remove: the object, or its
	// kind, does not exist in the cluster.
	ActionAbsent Action = "Absent"
	// ActionSkipped means the object was deliberately left alone: a
	// conflict (Err says why) or, on removal, an object flotilla does not
	// own (Reason says why).
	ActionSkipped Action = "Skipped"
	// ActionFailed means the request failed; Err says why.
	ActionFailed Action = "Failed"
)

// Outcome is what happened to one object in one cluster.
type Outcome struct {
	// Cluster is the member cluster.
	Cluster string
	// Object identifies the object: the template, or the namespace created.
	Object api.TemplateRef
	// Action is what happened.
	Action Action
	// ResourceVersion is the live object's after an apply, a namespace
	// creation or a release.
	ResourceVersion string
	// Generation is the live object's metadata.generation after an apply or
	// a release.
	Generation int64
	// Hash is the applied object's render.AnnotationRenderedHash.
	Hash string
	// Changed is set when the object is new or its resourceVersion moved
	// between the read before the apply and the apply: the apply wrote
	// something (or, rarely, someone else wrote in between).
	Changed bool
	// Adopted is set when an apply took over an existing object flotilla did
	// not own (ConflictResolution Overwrite).
	Adopted bool
	// Live is the object as the apply returned it (Applied only).
	Live *unstructured.Unstructured
	// Reason explains a Skipped or Absent outcome that is not an error.
	Reason string
	// Err is set for Failed, and for Skipped because of a conflict (a
	// *ConflictError). It is also set on an Applied CustomResourceDefinition
	// that did not become Established in time: the object is written and
	// flotilla's, so the outcome stays Applied, but its kinds are not served.
	Err error
}

// Result lists every outcome of one call, by cluster name and then in the
// order the objects were handled.
type Result struct {
	// Outcomes holds one entry per object and cluster, plus one per
	// namespace flotilla created.
	Outcomes []Outcome
}

// Err joins the errors of every outcome; nil when all succeeded.
func (r Result) Err() error {
	var errs []error
	for _, o := range r.Outcomes {
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	return errors.Join(errs...)
}

// Cluster returns the outcomes of one cluster.
func (r Result) Cluster(name string) []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Cluster == name {
			out = append(out, o)
		}
	}
	return out
}

// Find returns the outcome for one object in one cluster. Versions are
// ignored, as in TemplateRef.ID.
func (r Result) Find(cluster string, object api.TemplateRef) (Outcome, bool) {
	for _, o := range r.Outcomes {
		if o.Cluster == cluster && o.Object.SameTemplate(object) {
			return o, true
		}
	}
	return Outcome{}, false
}

// errMisconfigured is wrapped by check.
var errMisconfigured = errors.New("executor misconfigured")

// check reports a missing required field, so a wrongly built Executor fails
// every object clearly instead of panicking.
func (e *Executor) check() error {
	switch {
	case e.Clusters == nil:
		return fmt.Errorf("%w: Clusters is nil", errMisconfigured)
	case e.Fleet == "":
		return fmt.Errorf("%w: Fleet is empty", errMisconfigured)
	}
	return nil
}

// Manager is the server-side apply field manager the executor applies
// with.
func (e *Executor) Manager() string { return e.fieldManager() }

func (e *Executor) fieldManager() string {
	if e.FieldManager == "" {
		return DefaultFieldManager
	}
	return e.FieldManager
}

func (e *Executor) concurrency() int {
	if e.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return e.Concurrency
}

func (e *Executor) objectConcurrency() int {
	if e.ObjectConcurrency <= 0 {
		return DefaultObjectConcurrency
	}
	return e.ObjectConcurrency
}

func (e *Executor) establishTimeout() time.Duration {
	if e.EstablishTimeout <= 0 {
		return DefaultEstablishTimeout
	}
	return e.EstablishTimeout
}
