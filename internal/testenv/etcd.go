package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// startAttempts bounds the retries when a port handed out by freePort was
// taken by someone else before the server bound it.
const startAttempts = 3

// addrInUse is how Go servers (etcd, kube-apiserver) report a port clash.
const addrInUse = "address already in use"

// startEtcd starts the fleet's one etcd, keeping its data and log in dir.
// fsync is off: the data is thrown away with the test.
func startEtcd(ctx context.Context, binDir, dir string, detach bool) (*process, string, error) {
	for attempt := 1; ; attempt++ {
		clientPort, err := freePort()
		if err != nil {
			return nil, "", err
		}
		peerPort, err := freePort()
		if err != nil {
			return nil, "", err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
		p := &process{
			name: binEtcd,
			path: filepath.Join(binDir, binEtcd),
			args: []string{
				"--name=testenv",
				"--data-dir=" + filepath.Join(dir, "data"),
				"--listen-client-urls=" + clientURL,
				"--advertise-client-urls=" + clientURL,
				"--listen-peer-urls=" + peerURL,
				"--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=testenv=" + peerURL,
				"--unsafe-no-fsync",
			},
			logPath: filepath.Join(dir, "etcd.log"),
			detach:  detach,
		}
		if err := p.start(); err != nil {
			return nil, "", err
		}
		err = waitFor(ctx, "etcd /health", p, []*process{p}, func(ctx context.Context) error {
			return etcdHealthy(ctx, clientURL)
		})
		if err == nil {
			return p, clientURL, nil
		}
		p.stop(stopGrace)
		if attempt < startAttempts && p.logMentions(addrInUse) {
			continue
		}
		return nil, "", fmt.Errorf("start etcd: %w", err)
	}
}

func etcdHealthy(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return err
	}
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("etcd /health: %s: %s", resp.Status, body)
	}
	return nil
}
