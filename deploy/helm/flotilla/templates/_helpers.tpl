{{/* The name of every object of the release. */}}
{{- define "flotilla.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "flotilla.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controlplane
{{- end -}}

{{- define "flotilla.labels" -}}
{{ include "flotilla.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/*
flotilla.checkNamespace fails unless the release is in flotilla-system: the control plane reads
the Clusters' credentials there (a fixed namespace, so a Cluster can never point it elsewhere).
*/}}
{{- define "flotilla.checkNamespace" -}}
{{- if ne .Release.Namespace "flotilla-system" -}}
{{- fail (printf "install the chart into the namespace flotilla-system (-n flotilla-system), not %q: the control plane reads the Clusters' credentials there" .Release.Namespace) -}}
{{- end -}}
{{- range .Values.templateKinds -}}
{{- if and (eq .kind "Secret") (eq (.group | default "") "") (not $.Values.propagateSecrets) -}}
{{- fail "templateKinds lists Secret: set propagateSecrets=true, which lets the control plane read every namespace's Secrets" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
flotilla.checkWebhook fails when the webhook would serve callers it cannot tell from the host:
client authentication on without a CA, or the NetworkPolicy on without the apiserver's source.
*/}}
{{- define "flotilla.checkWebhook" -}}
{{- if .Values.webhook.enabled -}}
{{- $auth := .Values.webhook.clientAuth -}}
{{- if and $auth.enabled (not $auth.caBundle) (not $auth.caConfigMap) -}}
{{- fail "webhook.clientAuth.enabled needs the CA of the kube-apiserver's webhook client certificate: --set-file webhook.clientAuth.caBundle=<PEM file>, or webhook.clientAuth.caConfigMap=<ConfigMap with ca.crt>; or webhook.clientAuth.enabled=false where the apiserver cannot present one (see the controlplane guide)" -}}
{{- end -}}
{{- $np := .Values.webhook.networkPolicy -}}
{{- if and $np.enabled (not $np.apiserver.cidrs) (not $np.apiserver.namespaceSelector) (not $np.apiserver.podSelector) -}}
{{- fail "webhook.networkPolicy.enabled needs where the kube-apiserver's traffic comes from (it often comes from the control-plane nodes' host network): webhook.networkPolicy.apiserver.cidrs, namespaceSelector or podSelector; or webhook.networkPolicy.enabled=false" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The ConfigMap holding ca.crt, the CA of the kube-apiserver's webhook client certificate. */}}
{{- define "flotilla.clientCAConfigMap" -}}
{{- .Values.webhook.clientAuth.caConfigMap | default (printf "%s-webhook-client-ca" (include "flotilla.fullname" .)) -}}
{{- end -}}

{{- define "flotilla.clusterProxyService" -}}
{{- printf "%s-cluster-proxy" (include "flotilla.fullname" .) -}}
{{- end -}}

{{- define "flotilla.webhookService" -}}
{{- printf "%s-webhook" (include "flotilla.fullname" .) -}}
{{- end -}}

{{- define "flotilla.metricsService" -}}
{{- printf "%s-metrics" (include "flotilla.fullname" .) -}}
{{- end -}}

{{/* The Secret with tls.crt, tls.key and ca.crt, mounted by every replica. */}}
{{- define "flotilla.certSecret" -}}
{{- printf "%s-serving-cert" (include "flotilla.fullname" .) -}}
{{- end -}}

{{/* The DNS names the serving certificate holds: the webhook's and the metrics' Services. */}}
{{- define "flotilla.certNames" -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list -}}
{{- $services := list (include "flotilla.webhookService" .) (include "flotilla.metricsService" .) -}}
{{- if .Values.clusterProxy.enabled -}}
{{- $services = append $services (include "flotilla.clusterProxyService" .) -}}
{{- end -}}
{{- range $services -}}
{{- $names = append $names (printf "%s.%s.svc" . $ns) -}}
{{- $names = append $names (printf "%s.%s.svc.cluster.local" . $ns) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* "true" when cert-manager issues the serving certificate. */}}
{{- define "flotilla.certManager" -}}
{{- $mode := toString .Values.webhook.certManager -}}
{{- if or (eq $mode "true") (and (eq $mode "auto") (.Capabilities.APIVersions.Has "cert-manager.io/v1")) -}}
true
{{- end -}}
{{- end -}}

{{/* The controlplane's --template-kinds: group/version/Kind, or version/Kind for the core group. */}}
{{- define "flotilla.templateKinds" -}}
{{- $out := list -}}
{{- range .Values.templateKinds -}}
{{- if .group -}}
{{- $out = append $out (printf "%s/%s/%s" .group .version .kind) -}}
{{- else -}}
{{- $out = append $out (printf "%s/%s" .version .kind) -}}
{{- end -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/*
flotilla.clustersNamespace is the namespace of the pull agents' Leases (apis.Groups.ClusterLeaseNamespace):
flotilla-cluster, or karmada-cluster with apiGroups=karmada.
*/}}
{{- define "flotilla.clustersNamespace" -}}
{{- if eq .Values.apiGroups "karmada" -}}karmada-cluster{{- else -}}flotilla-cluster{{- end -}}
{{- end -}}

{{/*
flotilla.domain is the domain of the API groups the control plane serves (values: apiGroups):
flotilla.io, or karmada.io with apiGroups=karmada. flotilla.checkAPIGroups fails on any other value.
*/}}
{{- define "flotilla.domain" -}}
{{- if eq .Values.apiGroups "karmada" -}}karmada.io{{- else if eq .Values.apiGroups "flotilla" -}}flotilla.io{{- else -}}
{{- fail (printf "apiGroups must be flotilla or karmada, not %q" .Values.apiGroups) -}}
{{- end -}}
{{- end -}}
