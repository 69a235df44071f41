package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

// TestWriteAlignedMatchesTabwriter holds the plugin's table layout to
// text/tabwriter's (padding 3, spaces), which kubectl prints with: the
// same bytes for ASCII, wide runes, empty cells and a single column.
func TestWriteAlignedMatchesTabwriter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines [][]string
	}{
		{"kubectl's columns", [][]string{
			{"CLUSTER", "NAMESPACE", "NAME", "READY", "AGE"},
			{"member-000", "ns-0", "app-0000", "2/3", "1d"},
			{"m1", "kube-system", "coredns", "10/10", "<unknown>"},
		}},
		{"runes wider than a byte", [][]string{{"NAME", "AGE"}, {"café-ünïcødé", "5m"}, {"x", "10h"}}},
		{"empty cells", [][]string{{"A", "", "C"}, {"", "", ""}, {"aaaa", "b", ""}}},
		{"one column", [][]string{{"NAME"}, {"web"}, {"a-longer-name"}}},
		{"header only", [][]string{{"CLUSTER", "NAME"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			tw := tabwriter.NewWriter(&want, 0, 8, 3, ' ', 0)
			for _, l := range tc.lines {
				fmt.Fprintln(tw, strings.Join(l, "\t"))
			}
			if err := tw.Flush(); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := writeAligned(&got, func(yield func([]string)) {
				for _, l := range tc.lines {
					yield(l)
				}
			}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("(-tabwriter +writeAligned):\n%s", diff)
			}
		})
	}
}

// TestDecodeTable reads Tables as servers write them: cells as kubectl
// prints them (an int64 beyond float64's precision exactly, null as
// <none>), each row's namespace from its object, members it does not read
// skipped wherever they are, and bad input refused with where it broke.
func TestDecodeTable(t *testing.T) {
	const cols = `"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"d","priority":0},{"name":"Restarts","type":"integer","description":"","priority":1}]`
	for _, tc := range []struct {
		name, in string
		want     []textRow
		err      string
	}{
		{"rows with metadata", `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},` + cols + `,"rows":[` +
			`{"cells":["web",9007199254740993],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"web","namespace":"shop","labels":{"a":"b"}}}},` +
			`{"cells":["db",null,true,1.5,{"k":"v"},["x"]],"conditions":null,"object":{"metadata":{"namespace":"data"}}}]}`,
			[]textRow{{[]string{"web", "9007199254740993"}, "shop"}, {[]string{"db", "<none>", "true", "1.5", `{"k":"v"}`, `["x"]`}, "data"}}, ""},
		{"rows before columns, without objects", `{"rows":[{"cells":["a\u00e9\"b"]}],` + cols + `}`,
			[]textRow{{[]string{`aé"b`}, ""}}, ""},
		{"no rows", `{"kind":"Table",` + cols + `,"rows":null}`, nil, ""},
		{"cut short", `{"kind":"Table",` + cols + `,"rows":[{"cells":["a"]},{"cells":["b"`, nil, "row 1"},
		{"not an object", `["Table"]`, nil, "want {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeTable(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.rows, cmp.AllowUnexported(textRow{})); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if len(got.columns) != 2 || got.columns[1].Name != "Restarts" || got.columns[1].Priority != 1 {
				t.Errorf("columns %+v", got.columns)
			}
		})
	}
}

// TestGetFromCacheOneNamespaceAsksNoObjects: `get -n NS` prints no
// namespace column, so the plugin asks the cache for rows without their
// objects (includeObject=None), a fraction of the bytes, and prints the
// same lines as with them.
func TestGetFromCacheOneNamespaceAsksNoObjects(t *testing.T) {
	c := filledCache(t, 2, 100)
	srv := searchServer(t, c)
	var received int64
	hc := *srv.Client()
	hc.Transport = countingTransport{next: hc.Transport, n: &received}
	get := func(o getCommand, q url.Values) (string, int64) {
		t.Helper()
		received = 0
		o.stderr, o.source = &bytes.Buffer{}, sourceCache
		u := srv.URL + fleetview.SearchPrefix + "/apis/apps/v1/namespaces/ns-3/deployments"
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		results, err := o.readCache(&hc, u, benchDeployments, "")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := o.print(results, &out); err != nil {
			t.Fatal(err)
		}
		return out.String(), received
	}
	o := getCommand{getOptions: getOptions{namespace: "ns-3"}}
	out, n := get(o, o.listQuery("", true))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// 100 Deployments over 10 namespaces: 10 in ns-3 in each of 2 members.
	if len(lines) != 21 || !strings.HasPrefix(lines[0], "CLUSTER ") || strings.Contains(lines[0], "NAMESPACE") {
		t.Fatalf("get -n ns-3: want a header without NAMESPACE and 20 rows:\n%s", out)
	}
	// The same lines as from rows that carry their objects' metadata (an
	// apiserver's default), in a fraction of the bytes.
	withObjects, m := get(o, nil)
	if out != withObjects {
		t.Errorf("get -n ns-3 prints\n%s\nand from rows with metadata\n%s", out, withObjects)
	}
	if n*2 > m {
		t.Errorf("get -n ns-3 received %d bytes, rows with metadata %d: want under half", n, m)
	}
}

// countingBody counts the bytes read from a response body.
type countingBody struct {
	io.ReadCloser
	n *int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	*b.n += int64(n)
	return n, err
}

// countingTransport counts the response bytes its client reads.
type countingTransport struct {
	next http.RoundTripper
	n    *int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: c.n}
	}
	return resp, err
}

// TestGetPrintsCellsAsServed: a cell is printed as the server wrote it,
// as kubectl prints it: an integer column beyond float64's precision
// exactly (not 9.007199254740992e+15), null as <none>, whatever the
// member or the cache serves.
func TestGetPrintsCellsAsServed(t *testing.T) {
	table := `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"columnDefinitions":[` +
		`{"name":"Cluster","type":"string"},{"name":"Name","type":"string"},{"name":"Bytes","type":"integer"},{"name":"Owner","type":"string"}],` +
		`"rows":[{"cells":["m1","big",9007199254740993,null],"object":{"metadata":{"namespace":"ns"}}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json;as=Table;g=meta.k8s.io;v=v1")
		_, _ = io.WriteString(w, table)
	}))
	t.Cleanup(srv.Close)
	o := getCommand{getOptions: getOptions{stderr: io.Discard, allNamespaces: true}, source: sourceCache}
	results, err := o.readCache(srv.Client(), srv.URL, benchDeployments, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := o.print(results, &out); err != nil {
		t.Fatal(err)
	}
	want := "CLUSTER   NAMESPACE   NAME   BYTES              OWNER\nm1        ns          big    9007199254740993   <none>\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
