package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// BrokenImageTag is the image tag whose pods never become Ready in a Full
// cluster: kwok plays kubelet, so nothing pulls images, and a test that
// needs an unhealthy rollout (a failed health gate, application failover)
// deploys an image such as "nginx:broken". Every other image becomes Ready
// at once, as with kwok's defaults.
const BrokenImageTag = "broken"

// kwokStagesFile is the name of kwok's --config in the cluster's directory.
const kwokStagesFile = "kwok-stages.yaml"

// brokenImage is a kwok selector key (a jq expression) that is true for a
// pod with a container whose image has the BrokenImageTag.
var brokenImage = fmt.Sprintf(`'[.spec.containers[]?.image | endswith(":%s")] | any'`, BrokenImageTag)

// kwokPodStages replaces kwok's default pod stages (kwok uses its defaults
// only when the configuration has no pod stage; node stages stay the
// defaults). pod-ready, pod-complete and pod-delete are kwok v0.7.0's
// "fast" stages, pod-ready narrowed to pods without a broken image;
// pod-broken-image gives those pods an IP and a container stuck in
// ImagePullBackOff, and so never Ready, like a kubelet that cannot pull.
var kwokPodStages = podStartStage("pod-ready", "NotIn", `
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}

      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}

      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
        {{ else }}
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
        {{ end }}
      {{ end }}
`, "Running") + "---\n" + podStartStage("pod-broken-image", "In", `
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
        reason: ContainersNotReady
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
        reason: ContainersNotReady

      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          waiting:
            reason: ImagePullBackOff
            message: "the image never becomes ready (flotilla testenv: tag `+BrokenImageTag+`)"
      {{ end }}
`, "Pending") + `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values:
      - 'Job'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      {{ $origin := index $root.status.containerStatuses $index }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    finalizers:
      empty: true
    delete: true
`

// podStartStage is a stage for pods kwok has not started yet (no IP, not
// being deleted) whose broken-image test is brokenOp (In or NotIn "true"):
// it writes status (conditions and container statuses, indented for the
// template) and gives the pod its addresses and phase.
func podStartStage(name, brokenOp, status, phase string) string {
	return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: ` + name + `
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.podIP'
      operator: 'DoesNotExist'
    - key: ` + brokenImage + `
      operator: '` + brokenOp + `'
      values: ['true']
  next:
    statusTemplate: |
      {{ $now := Now }}
` + status + `
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: ` + phase + `
      startTime: {{ $now | Quote }}
`
}

// writeKwokStages writes kwok's pod stages into dir and returns the path
// to pass as --config.
func writeKwokStages(dir string) (string, error) {
	path := filepath.Join(dir, kwokStagesFile)
	if err := os.WriteFile(path, []byte(kwokPodStages), 0o600); err != nil {
		return "", fmt.Errorf("write kwok stages: %w", err)
	}
	return path, nil
}
