// Command terraform-provider-flotilla is flotilla's single binary. With no
// arguments it serves the Terraform plugin protocol (v6); subcommands run the
// other front ends of the same engine.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	rdebug "runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/version"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/cli"
	tfprovider "github.com/flotilla-io/terraform-provider-flotilla/provider/terraform"
)

// providerAddress is the registry address Terraform uses for this provider.
const providerAddress = "registry.terraform.io/flotilla-io/flotilla"

func main() {
	// Installed (or linked) as kubectl-flotilla, the binary is a kubectl
	// plugin: kubectl runs it for `kubectl flotilla ...`.
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == cli.PluginName {
		os.Exit(cli.KubectlFlotilla(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version", "--version":
			fmt.Fprintf(stdout, "terraform-provider-flotilla %s\n", version.String())
			return 0
		case "preview":
			return cli.Preview(args[1:], os.Stdin, stdout, stderr)
		case "controlplane":
			return cli.Controlplane(args[1:], stderr)
		case "crossplane":
			return cli.Crossplane(args[1:], stderr)
		case "agent":
			return cli.Agent(args[1:], stderr)
		case "adopt-karmada":
			return cli.AdoptKarmada(args[1:], stdout, stderr)
		case "register":
			return cli.Register(args[1:], stdout, stderr)
		case "help", "-h", "--help":
			usage(stdout)
			return 0
		}
	}
	return serve(args, stderr)
}

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("terraform-provider-flotilla", flag.ContinueOnError)
	fs.SetOutput(stderr)
	debug := fs.Bool("debug", false, "start the provider in debug mode for use with delve (prints TF_REATTACH_PROVIDERS)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unknown command %q\n\n", fs.Arg(0))
		usage(stderr)
		return 2
	}
	quietSDKLogs()
	if os.Getenv("GOGC") == "" {
		// The plugin framework allocates heavily while converting large
		// Dynamic values (manifests, rendered objects); profiles of a 10-member,
		// 100-app plan showed a quarter of the CPU in the garbage collector.
		// Trading some memory for it is the better deal for a short-lived plugin.
		rdebug.SetGCPercent(400)
	}
	if path := os.Getenv("FLOTILLA_CPUPROFILE"); path != "" {
		// A developer's hook: profile one terraform run's provider process.
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(stderr, "cpu profile: %v\n", err)
			return 1
		}
		defer stop()
	}
	if path := os.Getenv("FLOTILLA_HEAPPROFILE"); path != "" {
		// The same for memory: the heap near its peak, and the peak RSS.
		defer startHeapProfile(path)()
	}
	err := providerserver.Serve(context.Background(), tfprovider.New(version.Version), providerserver.ServeOpts{
		Address: providerAddress,
		Debug:   *debug,
	})
	if err != nil {
		fmt.Fprintf(stderr, "serve terraform provider: %v\n", err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprint(w, `terraform-provider-flotilla: multi-cluster Kubernetes as code.

Usage:
  terraform-provider-flotilla [-debug]   serve the Terraform plugin protocol (started by terraform)
  terraform-provider-flotilla preview -f FILE|DIR [-o json|table]
                                         dry-run Karmada YAML: placement and rendered manifests per cluster
  terraform-provider-flotilla controlplane --kubeconfig HOST
                                         run the continuous control plane against a host apiserver
  terraform-provider-flotilla crossplane [--kubeconfig MGMT]
                                         run the Crossplane provider's managed resource controllers
  terraform-provider-flotilla register --hub-kubeconfig ADMIN --cluster-name NAME --out FILE
                                         prepare the hub for a pull-mode member and write its agent's kubeconfig
  terraform-provider-flotilla agent --hub-kubeconfig HUB --cluster-name NAME [--kubeconfig MEMBER]
                                         run a pull-mode agent beside a member the control plane cannot reach
  terraform-provider-flotilla adopt-karmada --kubeconfig HOST [--dry-run=false]
                                         take over a host where Karmada's controllers ran, without member writes
  terraform-provider-flotilla version    print the version
`)
}

// startCPUProfile writes a CPU profile to path (with the process ID
// appended, since terraform may start several provider processes) until the
// returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// quietSDKLogs turns the plugin SDK's own trace logs off when Terraform will
// drop them anyway (TF_LOG unset): the framework logs every attribute it walks,
// which for large manifests costs more CPU than planning them. Set TF_LOG, or
// any TF_LOG_SDK* variable, to get them back.
func quietSDKLogs() {
	if os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != "" {
		return
	}
	for _, env := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if _, set := os.LookupEnv(env); !set {
			_ = os.Setenv(env, "OFF")
		}
	}
}
