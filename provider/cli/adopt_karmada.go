package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// AdoptKarmada prepares a host where Karmada's controller-manager and
// scheduler ran for flotilla's control plane in Karmada's API groups,
// without a write to any member. It surveys the host and, read-only, the
// members, and lists per object what will be taken over and what cannot be,
// with the reason. The dry run (the default) stops there. With
// --dry-run=false, and only when no Karmada controller still runs, it makes
// the host-side changes alone: it labels Karmada's CRDs as the control
// plane's, so the control plane's refusal of a Karmada-owned host lets it
// start, and writes the adoption record (shared.KarmadaAdoptionConfigMap)
// naming the member objects that match their Work, which the execution
// then takes over without writing them.
func AdoptKarmada(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("adopt-karmada", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file` of the host apiserver Karmada's controllers ran against (the karmada-apiserver) (required)")
	kubeContext := fs.String("context", "", "kubeconfig context; default its current-context")
	dryRun := fs.Bool("dry-run", true, "only list what would be adopted and what cannot be; --dry-run=false makes the host-side changes (never a member write)")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound on the whole survey")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: terraform-provider-flotilla adopt-karmada --kubeconfig HOST [--dry-run=false]\n\n"+
			"Takes over a host where Karmada's controller-manager and scheduler ran: lists, per binding, Work and\n"+
			"member object, what the control plane in Karmada's groups (--api-groups=karmada) will take over\n"+
			"without writing to members, and what it cannot, with the reason. It writes nothing unless\n"+
			"--dry-run=false, and never writes to a member.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, 2)
	}
	if *kubeconfig == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	// Karmada's groups, before anything builds a scheme or a client.
	apis.Use(apis.KarmadaGroups)
	cfg, err := loadKubeconfig(*kubeconfig, *kubeContext)
	if err != nil {
		fmt.Fprintf(stderr, "adopt-karmada: load host kubeconfig %s: %v\n", *kubeconfig, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	s, err := surveyKarmada(ctx, cfg, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "adopt-karmada: %v\n", err)
		return 1
	}
	s.print(stdout)
	switch {
	case len(s.blockers) > 0:
		fmt.Fprintf(stdout, "not adopted: %d blocker(s) above; nothing was written\n", len(s.blockers))
		return 1
	case *dryRun:
		fmt.Fprintln(stdout, "dry run: nothing was written; run again with --dry-run=false to adopt")
		return 0
	}
	if err := s.adopt(ctx); err != nil {
		fmt.Fprintf(stderr, "adopt-karmada: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "adopted: %d member object(s) recorded in %s/%s, %d CRD(s) labelled %s=%s; start the control plane with --api-groups=karmada\n",
		s.adoptedCount(), shared.SystemNamespace, shared.KarmadaAdoptionConfigMap, len(s.crds), crd.LabelInstalledBy, crd.InstalledByFlotilla)
	return 0
}

// adopt makes the survey's host-side changes: the CRDs labelled, the
// record written. Nothing else on the host and nothing in a member.
func (s *karmadaSurvey) adopt(ctx context.Context) error {
	for _, name := range s.crds {
		var d apiextensionsv1.CustomResourceDefinition
		if err := s.host.Get(ctx, client.ObjectKey{Name: name}, &d); err != nil {
			return fmt.Errorf("read crd %s: %w", name, err)
		}
		orig := d.DeepCopy()
		if d.Labels == nil {
			d.Labels = map[string]string{}
		}
		d.Labels[crd.LabelInstalledBy] = crd.InstalledByFlotilla
		if err := s.host.Patch(ctx, &d, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("label crd %s: %w", name, err)
		}
	}
	for cluster, name := range s.namespaces {
		var ns corev1.Namespace
		if err := s.host.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
			return fmt.Errorf("read namespace %s: %w", name, err)
		}
		orig := ns.DeepCopy()
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[shared.LabelExecutionSpace] = cluster
		if err := s.host.Patch(ctx, &ns, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("label namespace %s: %w", name, err)
		}
	}
	raw, err := json.Marshal(s.adoptions)
	if err != nil {
		return fmt.Errorf("encode the adoption record: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.SystemNamespace}}
	if err := s.host.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", shared.SystemNamespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: shared.SystemNamespace, Name: shared.KarmadaAdoptionConfigMap}}
	if _, err := controllerutil.CreateOrUpdate(ctx, s.host, cm, func() error {
		cm.Data = map[string]string{shared.KarmadaAdoptionKey: string(raw)}
		return nil
	}); err != nil {
		return fmt.Errorf("write the adoption record %s/%s: %w", shared.SystemNamespace, shared.KarmadaAdoptionConfigMap, err)
	}
	return nil
}

// print lists the survey: blockers first, then every finding.
func (s *karmadaSurvey) print(w io.Writer) {
	for _, b := range s.blockers {
		fmt.Fprintf(w, "BLOCKED  %s\n", b)
	}
	slices.SortStableFunc(s.findings, func(a, b finding) int {
		if a.adopt != b.adopt {
			if a.adopt {
				return -1
			}
			return 1
		}
		return 0
	})
	for _, f := range s.findings {
		verdict := "ADOPT"
		if !f.adopt {
			verdict = "SKIP"
		}
		where := ""
		if f.cluster != "" {
			where = " in cluster " + f.cluster
		}
		fmt.Fprintf(w, "%-8s %s%s: %s\n", verdict, f.object, where, f.reason)
	}
	for _, warning := range s.warnings {
		fmt.Fprintf(w, "WARN     %s\n", warning)
	}
	clusters := make([]string, 0, len(s.namespaces))
	for cluster := range s.namespaces {
		clusters = append(clusters, cluster)
	}
	slices.Sort(clusters)
	for _, cluster := range clusters {
		fmt.Fprintf(w, "LABEL    Namespace %s: Karmada's execution namespace of cluster %s; labelled %s=%s so the control plane keeps its Works there\n", s.namespaces[cluster], cluster, shared.LabelExecutionSpace, cluster)
	}
	for _, name := range s.crds {
		fmt.Fprintf(w, "LABEL    CustomResourceDefinition %s: installed by Karmada; labelled %s=%s so the control plane serves it\n", name, crd.LabelInstalledBy, crd.InstalledByFlotilla)
	}
}

func (s *karmadaSurvey) adoptedCount() int {
	n := 0
	for _, a := range s.adoptions {
		n += len(a.Clusters)
	}
	return n
}
