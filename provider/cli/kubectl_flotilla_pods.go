package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/term"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
)

// pluginStdin is exec's standard input; tests replace it.
var pluginStdin io.Reader = os.Stdin

// podCommand is what logs and exec share: the pod, its namespace and its
// cluster, found when -C is not given.
type podCommand struct {
	getOptions
	container string
}

// podFlags registers the host flags, -n, -C and -c.
func (o *podCommand) podFlags(fs *flag.FlagSet) {
	o.hostFlags(fs)
	o.memberFlags(fs, "the member `name` that runs the pod; default: the one member where the pod is found")
	for _, n := range []string{"c", "container"} {
		fs.StringVar(&o.container, n, "", "container `name`; default: the pod's only or default container")
	}
}

// podCluster is -C, or the one member where the user can see the pod
// (asked through the proxy, as the user): none or several is an error
// that names the members, as are members that did not answer.
func (o *podCommand) podCluster(host *rest.Config, pod string) (string, error) {
	if o.clusters != "" {
		if strings.Contains(o.clusters, ",") {
			return "", fmt.Errorf("-C %s: name one cluster", o.clusters)
		}
		return o.clusters, nil
	}
	clusters, err := o.clusterNames(host)
	if err != nil {
		return "", err
	}
	type answer struct {
		cluster string
		err     error
	}
	answers := make([]answer, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			cfg := memberConfig(host, c, o.timeout)
			hc, err := rest.HTTPClientFor(cfg)
			if err == nil {
				_, err = getRaw(hc, cfg.Host+podPath(o.namespace, pod, ""), "application/json")
			}
			answers[i] = answer{c, err}
		})
	}
	wg.Wait()
	var found, failed []string
	for _, a := range answers {
		switch {
		case a.err == nil:
			found = append(found, a.cluster)
		case !isNotFound(a.err):
			failed = append(failed, fmt.Sprintf("cluster %s: %v", a.cluster, a.err))
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", fmt.Errorf("pod %s/%s is in clusters %s: name one with -C", o.namespace, pod, strings.Join(found, ", "))
	case len(failed) > 0:
		return "", fmt.Errorf("pod %s/%s not found in any member that answered; %s", o.namespace, pod, strings.Join(failed, "; "))
	}
	return "", fmt.Errorf("pod %s/%s not found in clusters %s", o.namespace, pod, strings.Join(clusters, ", "))
}

// podPath is the member path of pod in namespace, or of its subresource.
func podPath(namespace, pod, subresource string) string {
	p := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(pod)
	if subresource != "" {
		p += "/" + subresource
	}
	return p
}

func pluginLogs(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("logs", stderr)
	o := podCommand{getOptions: getOptions{stderr: stderr}}
	o.podFlags(fs)
	var follow bool
	tail := fs.Int64("tail", -1, "lines from the end of the log to show; -1: all")
	for _, n := range []string{"f", "follow"} {
		fs.BoolVar(&follow, n, false, "stream the log")
	}
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "kubectl flotilla logs: name one pod")
		return 2
	}
	if err := o.logs(pos[0], *tail, follow, stdout); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// logs copies the pod's log from its member to stdout, as the member
// serves it; its refusal is passed through, naming the cluster.
func (o *podCommand) logs(pod string, tail int64, follow bool, stdout io.Writer) error {
	host, err := o.hostConfig()
	if err != nil {
		return err
	}
	cluster, err := o.podCluster(host, pod)
	if err != nil {
		return err
	}
	timeout := o.timeout
	if follow {
		// A followed log lasts as long as the user wants; the connection
		// still times out while it is made.
		timeout = 0
	}
	cfg := memberConfig(host, cluster, timeout)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	q := url.Values{}
	if o.container != "" {
		q.Set("container", o.container)
	}
	if tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(tail, 10))
	}
	if follow {
		q.Set("follow", "true")
	}
	u := cfg.Host + podPath(o.namespace, pod, "log") + "?" + q.Encode()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cluster %s: pod %s/%s: %w", cluster, o.namespace, pod, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("cluster %s: pod %s/%s: %w", cluster, o.namespace, pod, statusError(resp))
	}
	if _, err := io.Copy(stdout, resp.Body); err != nil {
		return fmt.Errorf("cluster %s: pod %s/%s: log stream: %w", cluster, o.namespace, pod, err)
	}
	return nil
}

func pluginExec(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("exec", stderr)
	o := podCommand{getOptions: getOptions{stderr: stderr}}
	o.podFlags(fs)
	var stdin, tty bool
	for _, n := range []string{"i", "stdin"} {
		fs.BoolVar(&stdin, n, false, "pass stdin to the container")
	}
	for _, n := range []string{"t", "tty"} {
		fs.BoolVar(&tty, n, false, "stdin is a TTY")
	}
	pos, command, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || len(command) == 0 {
		fmt.Fprintln(stderr, "kubectl flotilla exec: name one pod, then -- and the command")
		return 2
	}
	if err := o.exec(pos[0], command, stdin, tty, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// exec runs command in the pod through the proxy's upgrade path, with
// WebSocket first and SPDY as the fallback, as kubectl does.
func (o *podCommand) exec(pod string, command []string, stdin, tty bool, stdout, stderr io.Writer) error {
	host, err := o.hostConfig()
	if err != nil {
		return err
	}
	cluster, err := o.podCluster(host, pod)
	if err != nil {
		return err
	}
	cfg := memberConfig(host, cluster, 0)
	q := url.Values{"command": command}
	if o.container != "" {
		q.Set("container", o.container)
	}
	q.Set("stdout", "true")
	q.Set("stderr", strconv.FormatBool(!tty))
	q.Set("stdin", strconv.FormatBool(stdin))
	q.Set("tty", strconv.FormatBool(tty))
	u, err := url.Parse(cfg.Host + podPath(o.namespace, pod, "exec") + "?" + q.Encode())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, u.String())
	if err != nil {
		return err
	}
	executor, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdout: stdout, Tty: tty}
	if !tty {
		opts.Stderr = stderr
	}
	if stdin {
		opts.Stdin = pluginStdin
		if f, ok := pluginStdin.(*os.File); ok && tty && term.IsTerminal(int(f.Fd())) {
			state, err := term.MakeRaw(int(f.Fd()))
			if err != nil {
				return fmt.Errorf("terminal: %w", err)
			}
			defer func() { _ = term.Restore(int(f.Fd()), state) }()
		}
	}
	if err := executor.StreamWithContext(context.Background(), opts); err != nil {
		return fmt.Errorf("cluster %s: pod %s/%s: %w", cluster, o.namespace, pod, err)
	}
	return nil
}

// statusError is the member's refusal in resp: its Status message, or the
// body.
func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return fmt.Errorf("%s (%d)", st.Message, resp.StatusCode)
	}
	return errors.New(resp.Status + ": " + strings.TrimSpace(string(body)))
}
