package fleetview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// tableContentType is the media type of a served Table, as an apiserver
// answers `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
const tableContentType = "application/json;as=Table;g=meta.k8s.io;v=v1"

// printColumn is one column a member's apiserver prints for a kind,
// between NAME and AGE, and how to read its cell from the object.
type printColumn struct {
	def  metav1.TableColumnDefinition
	cell func(u *unstructured.Unstructured) any
}

// printColumns are the columns kubectl shows for the kinds people list
// across a fleet most, the same as the Kubernetes table printers
// (pkg/printers/internalversion), so `get` from the cache reads like `get`
// from a member. Any other kind gets NAME and AGE, as kubectl prints a kind
// without printer columns. A member's CRD additionalPrinterColumns are not
// read: the cache keeps objects, not the members' CRDs.
var printColumns = map[schema.GroupKind][]printColumn{
	{Group: "apps", Kind: "Deployment"}: {
		{metav1.TableColumnDefinition{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"}, readyOfDesired},
		{metav1.TableColumnDefinition{Name: "Up-to-date", Type: "integer", Description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec."},
			intField("status", "updatedReplicas")},
		{metav1.TableColumnDefinition{Name: "Available", Type: "integer", Description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."},
			intField("status", "availableReplicas")},
	},
	{Group: "apps", Kind: "StatefulSet"}: {
		{metav1.TableColumnDefinition{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"}, readyOfDesired},
	},
	{Group: "apps", Kind: "ReplicaSet"}: {
		{metav1.TableColumnDefinition{Name: "Desired", Type: "integer", Description: "Replicas is the number of desired replicas."}, intField("spec", "replicas")},
		{metav1.TableColumnDefinition{Name: "Current", Type: "integer", Description: "Replicas is the most recently observed number of replicas."}, intField("status", "replicas")},
		{metav1.TableColumnDefinition{Name: "Ready", Type: "integer", Description: "The number of ready replicas for this replica set."}, intField("status", "readyReplicas")},
	},
}

func readyOfDesired(u *unstructured.Unstructured) any {
	return fmt.Sprintf("%d/%d", intField("status", "readyReplicas")(u), intField("spec", "replicas")(u))
}

func intField(path ...string) func(u *unstructured.Unstructured) any {
	return func(u *unstructured.Unstructured) any {
		v, _, _ := unstructured.NestedInt64(u.Object, path...)
		return v
	}
}

// renderRow encodes the cells of u's Table row before AGE (CLUSTER, NAME,
// the kind's columns) as the inside of a JSON array, so serving a table
// neither decodes the object nor computes them per request.
func renderRow(u *unstructured.Unstructured, cluster string) ([]byte, error) {
	b := appendString(nil, cluster)
	b = append(b, ',')
	b = appendString(b, u.GetName())
	cols := printColumns[u.GroupVersionKind().GroupKind()]
	if len(cols) == 0 {
		return b, nil
	}
	cells := make([]any, len(cols))
	for i, c := range cols {
		cells[i] = c.cell(u)
	}
	more, err := json.Marshal(cells)
	if err != nil {
		return nil, err
	}
	b = append(b, ',')
	return append(b, more[1:len(more)-1]...), nil
}

// renderPartial encodes o's PartialObjectMetadata, what a row carries of its
// object by default (includeObject=Metadata): name, namespace, creation
// time and the annotation naming the member.
func renderPartial(o *cachedObject) []byte {
	b := append([]byte(nil), `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":`...)
	b = appendString(b, o.name)
	if o.namespace != "" {
		b = append(b, `,"namespace":`...)
		b = appendString(b, o.namespace)
	}
	if !o.created.IsZero() {
		b = append(b, `,"creationTimestamp":`...)
		b = appendString(b, o.created.UTC().Format(time.RFC3339))
	}
	b = append(b, `,"annotations":{"`+ClusterAnnotation+`":`...)
	b = appendString(b, o.cluster)
	return append(b, `}}}`...)
}

// wantsTable reports whether the Accept header asks for a meta.k8s.io/v1
// Table before any plain JSON, as kubectl get does.
func wantsTable(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if params["as"] == "Table" && params["g"] == metav1.GroupName && params["v"] == "v1" &&
			(mt == "application/json" || mt == "*/*" || mt == "application/*") {
			return true
		}
		if params["as"] == "" && (mt == "application/json" || mt == "*/*" || mt == "application/*") {
			return false
		}
	}
	return false
}

// tableWriter writes a meta.k8s.io/v1 Table of cached objects: CLUSTER,
// NAME, the kind's columns, AGE; each row with the object as its
// includeObject asks (metadata by default, as an apiserver sends).
type tableWriter struct {
	gvk     schema.GroupVersionKind
	include metav1.IncludeObjectPolicy
	now     time.Time
}

func (t tableWriter) write(out io.Writer, objs []*cachedObject) error {
	w := bufio.NewWriterSize(out, 64<<10)
	cols := []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The member cluster the object was read from."},
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	}
	for _, c := range printColumns[t.gvk.GroupKind()] {
		cols = append(cols, c.def)
	}
	cols = append(cols, metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]})
	defs, err := json.Marshal(cols)
	if err != nil {
		return err
	}
	_, _ = w.WriteString(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":""},"columnDefinitions":`)
	_, _ = w.Write(defs)
	_, _ = w.WriteString(`,"rows":[`)
	// Objects created at the same time print the same AGE: render it once
	// per creation time, not once per row.
	ages := map[int64][]byte{}
	buf := make([]byte, 0, 512)
	for i, o := range objs {
		buf = buf[:0]
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"cells":[`...)
		buf = append(buf, o.row...)
		buf = append(buf, ',')
		buf = append(buf, t.age(ages, o.created)...)
		buf = append(buf, ']')
		switch t.include {
		case metav1.IncludeNone:
		case metav1.IncludeObject:
			buf = append(buf, `,"object":`...)
			buf = append(buf, o.raw...)
		default:
			buf = append(buf, `,"object":`...)
			buf = append(buf, o.partial...)
		}
		buf = append(buf, '}')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	_, _ = w.WriteString("]}\n")
	return w.Flush()
}

// age is the AGE cell, quoted, of an object created at created, memoized
// in ages by the creation time.
func (t tableWriter) age(ages map[int64][]byte, created time.Time) []byte {
	if created.IsZero() {
		return []byte(`"<unknown>"`)
	}
	key := created.UnixNano()
	if a, ok := ages[key]; ok {
		return a
	}
	a := appendString(nil, duration.HumanDuration(t.now.Sub(created)))
	ages[key] = a
	return a
}

// appendString appends s as a JSON string. Names, namespaces and cluster
// names are DNS labels and take the fast path; anything else goes through
// encoding/json.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// parseInclude reads includeObject, as an apiserver does: Metadata when
// absent.
func parseInclude(v string) (metav1.IncludeObjectPolicy, error) {
	switch p := metav1.IncludeObjectPolicy(v); p {
	case "":
		return metav1.IncludeMetadata, nil
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		return p, nil
	}
	return "", fmt.Errorf("includeObject %s: want None, Metadata or Object", strconv.Quote(v))
}
