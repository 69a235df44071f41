package status

import (
	"context"
	"sync"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// DefaultReadTimeout bounds each GET when Reader.Timeout is zero, so one
// member that does not answer cannot hold up the progress of a wait.
const DefaultReadTimeout = 10 * time.Second

// Reader is the default ReadFunc: it GETs the target from every member at
// once over dynamic clients. Pass its Read method to Wait.
type Reader struct {
	// Client returns a member's dynamic client, for example the Dynamic
	// field of what a member.Cache returns. An error means the member is
	// not connected; the member is then reported unreachable. It is called
	// once per member per read, concurrently.
	Client func(ctx context.Context, cluster string) (dynamic.Interface, error)
	// Timeout bounds each GET; zero means DefaultReadTimeout.
	Timeout time.Duration
}

// StaticClients returns a Reader.Client over a fixed set of clients.
func StaticClients(clients map[string]dynamic.Interface) func(ctx context.Context, cluster string) (dynamic.Interface, error) {
	return func(_ context.Context, cluster string) (dynamic.Interface, error) {
		c, ok := clients[cluster]
		if !ok || c == nil {
			return nil, api.ErrNotConnected
		}
		return c, nil
	}
}

// Read GETs the target in each cluster concurrently and returns the
// observations in the order of clusters. NotFound is an observation with
// neither object nor error.
func (r *Reader) Read(ctx context.Context, target Target, clusters []string) []Observation {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultReadTimeout
	}
	out := make([]Observation, len(clusters))
	var wg sync.WaitGroup
	for i, cluster := range clusters {
		wg.Go(func() {
			out[i] = r.read(ctx, target, cluster, timeout)
		})
	}
	wg.Wait()
	return out
}

func (r *Reader) read(ctx context.Context, target Target, cluster string, timeout time.Duration) Observation {
	if r.Client == nil {
		return Observation{Cluster: cluster, Err: api.ErrNotConnected}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := r.Client(ctx, cluster)
	if err != nil {
		return Observation{Cluster: cluster, Err: err}
	}
	obj, err := client.Resource(target.Resource).Namespace(target.Namespace).Get(ctx, target.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return Observation{Cluster: cluster}
	case err != nil:
		return Observation{Cluster: cluster, Err: err}
	default:
		return Observation{Cluster: cluster, Object: obj}
	}
}
