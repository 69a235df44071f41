{{/* The name of every object of the release. */}}
{{- define "flotilla-agent.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end -}}

{{- define "flotilla-agent.labels" -}}
{{ include "flotilla-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The Secret holding the hub's kubeconfig under the key kubeconfig. */}}
{{- define "flotilla-agent.hubSecret" -}}
{{- .Values.hub.existingSecret | default (printf "%s-hub" (include "flotilla-agent.fullname" .)) -}}
{{- end -}}

{{/*
flotilla-agent.check fails, naming the value to set, outside flotilla-system (where the agent keeps
the membership marker), without a valid cluster name, without exactly one hub kubeconfig, and with
API groups the agent does not speak.
*/}}
{{- define "flotilla-agent.check" -}}
{{- if ne .Release.Namespace "flotilla-system" -}}
{{- fail (printf "install the chart into the namespace flotilla-system (-n flotilla-system), not %q: the agent keeps the member's membership marker there" .Release.Namespace) -}}
{{- end -}}
{{- $name := .Values.clusterName | default "" | toString -}}
{{- if not $name -}}
{{- fail "clusterName is required: set clusterName to the member's Cluster in the hub, as given to `register --cluster-name`" -}}
{{- end -}}
{{- if or (gt (len $name) 48) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $name)) -}}
{{- fail (printf "clusterName %q: want a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit) of at most 48 characters" $name) -}}
{{- end -}}
{{- if and .Values.hub.existingSecret .Values.hub.kubeconfig -}}
{{- fail "set one of hub.existingSecret and hub.kubeconfig, not both: the agent reads one hub kubeconfig" -}}
{{- end -}}
{{- if not (or .Values.hub.existingSecret .Values.hub.kubeconfig) -}}
{{- fail "the hub's kubeconfig is required: set hub.existingSecret to a Secret in flotilla-system with the key kubeconfig, or hub.kubeconfig (--set-file hub.kubeconfig=FILE) to the file `register --out` wrote" -}}
{{- end -}}
{{- if not (has (toString .Values.apiGroups) (list "flotilla" "karmada")) -}}
{{- fail (printf "apiGroups %q: want flotilla or karmada, the hub control plane's --api-groups" (toString .Values.apiGroups)) -}}
{{- end -}}
{{- end -}}

{{/*
flotilla-agent.commonRules is rbac.preset common: the kinds most fleets propagate, with the verbs
the agent's apply, read-back, status collection and pruning use, and what the agent needs for
itself (nodes and pods for the resource summary; namespaces and configmaps, already listed, for the
member's ID and its membership marker; the non-resource URLs of health, version and discovery).
Multi-cluster services: EndpointSlices (a consumer's imported slices are applied, an exporter's are
read and reported to the hub) and the MCS API's ServiceExports and ServiceImports.
*/}}
{{- define "flotilla-agent.commonRules" -}}
{{- $write := list "get" "list" "watch" "create" "update" "patch" "delete" -}}
- apiGroups: [""]
  resources: [namespaces, configmaps, secrets, services, serviceaccounts, persistentvolumeclaims]
  verbs: {{ toJson $write }}
- apiGroups: [apps]
  resources: [deployments, statefulsets, daemonsets]
  verbs: {{ toJson $write }}
- apiGroups: [batch]
  resources: [jobs, cronjobs]
  verbs: {{ toJson $write }}
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: {{ toJson $write }}
- apiGroups: [autoscaling]
  resources: [horizontalpodautoscalers]
  verbs: {{ toJson $write }}
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: {{ toJson $write }}
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: {{ toJson $write }}
- apiGroups: [multicluster.x-k8s.io]
  resources: [serviceexports, serviceimports]
  verbs: {{ toJson $write }}
- apiGroups: [""]
  resources: [nodes, pods]
  verbs: [get, list, watch]
- nonResourceURLs: [/readyz, /version, /api, /apis]
  verbs: [get]
{{- end -}}
