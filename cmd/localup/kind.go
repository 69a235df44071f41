package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv/kind"
)

const (
	backendProcess = "process"
	backendKind    = "kind"
	// kindTimeout is up's default bound with -backend kind: the first run
	// pulls the node image, and kind makes each cluster with kubeadm.
	kindTimeout = 10 * time.Minute
)

func (st *state) kindFleet() *kind.Fleet {
	return &kind.Fleet{Dir: st.Dir, Logf: func(string, ...any) {}}
}

// backend is the state's backend; a state written before kind was
// supported has none and is a process one.
func (st *state) backend() string {
	if st.Backend == "" {
		return backendProcess
	}
	return st.Backend
}

// startKind makes the host and the members as kind clusters side by side.
// The host runs no workload controllers (see kind.Host). The clusters are
// recorded in st, and st written, before they are made (see kind.Fleet.Up),
// so down deletes exactly these.
func (st *state) startKind(ctx context.Context, flags upFlags, logf func(string, ...any)) (host *testenv.Cluster, members []*testenv.Cluster, err error) {
	prefix := kind.Prefix(st.Dir)
	specs := []kind.Spec{{Name: hostName, Prefix: prefix, Role: kind.Host, Image: flags.kindImage}}
	for i := range flags.members {
		specs = append(specs, kind.Spec{Name: fmt.Sprintf("member%d", i+1), Prefix: prefix, Image: flags.kindImage})
	}
	f := st.kindFleet()
	f.Logf = logf
	clusters, err := f.Up(ctx, specs, func(names []string) error {
		st.KindClusters = names
		return testenv.WriteState(filepath.Join(st.Dir, stateFile), st)
	})
	if err != nil {
		return nil, nil, err // Up deleted what it made; the state stays for down
	}
	return clusters[0], clusters[1:], nil
}

// stopKindMember stops the node containers of a member's kind cluster, so
// the member becomes unreachable as when its processes stop.
func (st *state) stopKindMember(name string, out io.Writer) error {
	kindName := kind.Prefix(st.Dir) + name
	if !slices.Contains(st.MemberNames, name) || !slices.Contains(st.KindClusters, kindName) {
		return fmt.Errorf("no member %q in %s; members are %q", name, st.Dir, st.MemberNames)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.kindFleet().Stop(ctx, kindName); err != nil {
		return fmt.Errorf("stop member %s: %w", name, err)
	}
	fmt.Fprintf(out, "localup: stopped member %s (kind cluster %s, docker stop); `localup down` deletes it and the rest\n", name, kindName)
	return nil
}
