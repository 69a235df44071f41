// Command custom-metrics-adapter serves custom.metrics.k8s.io and
// external.metrics.k8s.io to a test member from values a test writes to
// it. It is the test provider of sigs.k8s.io/custom-metrics-apiserver (an
// in-memory store of metric values) behind the library's own adapter
// server, as its test-adapter command runs it, with one difference: the
// endpoint that writes values listens on --write-address (loopback, a port
// the test chooses), where the upstream command fixes :8080 on every
// interface, which two members on one machine cannot share.
package main

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/emicklei/go-restful/v3"
	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"

	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
	fakeprov "sigs.k8s.io/custom-metrics-apiserver/test-adapter/provider"
)

func main() {
	logs.InitLogs()
	defer logs.FlushLogs()

	cmd := &basecmd.AdapterBase{Name: "custom-metrics-adapter"}
	var writeAddress string
	cmd.Flags().StringVar(&writeAddress, "write-address", "127.0.0.1:8080",
		"address of the endpoint that writes metric values (POST /write-metrics/namespaces/<ns>/<resource>/<name>/<metric>)")
	logs.AddFlags(cmd.Flags())
	if err := cmd.Flags().Parse(os.Args); err != nil {
		klog.Fatalf("parse flags: %v", err)
	}

	client, err := cmd.DynamicClient()
	if err != nil {
		klog.Fatalf("dynamic client: %v", err)
	}
	mapper, err := cmd.RESTMapper()
	if err != nil {
		klog.Fatalf("REST mapper: %v", err)
	}
	provider, writes := fakeprov.NewFakeProvider(client, mapper)
	cmd.WithCustomMetrics(provider)
	cmd.WithExternalMetrics(provider)

	container := restful.NewContainer()
	container.Add(writes)
	server := &http.Server{Addr: writeAddress, Handler: container, ReadHeaderTimeout: 3 * time.Second}
	go func() { klog.Fatal(server.ListenAndServe()) }()
	if err := cmd.Run(context.Background()); err != nil {
		klog.Fatalf("run the adapter: %v", err)
	}
}
