{{/* Chart name, at most 63 characters. */}}
{{- define "shunt.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name, at most 63 characters (a DNS label). */}}
{{- define "shunt.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* fullname plus a suffix, still a DNS label. Usage: include "shunt.suffixed" (list . "metrics") */}}
{{- define "shunt.suffixed" -}}
{{- $fullname := include "shunt.fullname" (index . 0) }}
{{- $suffix := printf "-%s" (index . 1) }}
{{- printf "%s%s" ($fullname | trunc (int (sub 63 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "shunt.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "shunt.labels" -}}
helm.sh/chart: {{ include "shunt.chart" . }}
{{ include "shunt.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: ingress-controller
{{- end }}

{{/* Labels the workload selects its pods by; never change them (selectors are immutable). */}}
{{- define "shunt.selectorLabels" -}}
app.kubernetes.io/name: {{ include "shunt.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "shunt.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "shunt.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "shunt.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The ConfigMap shunt edits in managed CoreDNS mode: the configured one or the target's usual one. */}}
{{- define "shunt.corednsConfigMap" -}}
{{- $defaults := dict "corefile" "coredns" "custom" "coredns-custom" }}
{{- default (get $defaults .Values.coredns.target) .Values.coredns.configMap.name }}
{{- end }}

{{/*
RBAC rules from files/rbac-rules.yaml, the single source shared with the binary's tests, as a
YAML list. Arguments (a dict):
  ctx            the root context
  key            "cluster", "namespace" or "coredns"
  scope          "all" (default), "cluster" (only cluster-scoped resources: ingressclasses) or
                 "namespaced" (every other resource); a rule left without resources is dropped
  resourceNames  optional list added to every rule
*/}}
{{- define "shunt.rules" -}}
{{- $file := .ctx.Files.Get "files/rbac-rules.yaml" | fromYaml }}
{{- if hasKey $file "Error" }}
{{- fail (printf "files/rbac-rules.yaml: %s" $file.Error) }}
{{- end }}
{{- $clusterScoped := list "ingressclasses" "nodes" "namespaces" "gatewayclasses" "gatewayclasses/status" }}
{{- $scope := default "all" .scope }}
{{- $out := list }}
{{- range $rule := required (printf "files/rbac-rules.yaml has no %q rules" .key) (get $file .key) }}
{{- $resources := list }}
{{- range $rule.resources }}
{{- $isCluster := has . $clusterScoped }}
{{- if or (eq $scope "all") (and (eq $scope "cluster") $isCluster) (and (eq $scope "namespaced") (not $isCluster)) }}
{{- $resources = append $resources . }}
{{- end }}
{{- end }}
{{- if $resources }}
{{- $new := dict "apiGroups" $rule.apiGroups "resources" $resources "verbs" $rule.verbs }}
{{- with $.resourceNames }}
{{- $_ := set $new "resourceNames" . }}
{{- end }}
{{- $out = append $out $new }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
Namespaces that get the namespaced rules when watchNamespaces is set: the watched ones, plus the
release namespace, where shunt reads its own Service for --publish-service.
*/}}
{{- define "shunt.roleNamespaces" -}}
{{- append .Values.watchNamespaces .Release.Namespace | uniq | toJson }}
{{- end }}

{{/* Non-empty when a class uses the nginx profile: a shadow class `nginx` or `NAME=nginx`, a class profile `NAME=nginx`. */}}
{{- define "shunt.servesNginx" -}}
{{- range .Values.shadowClasses }}{{ if or (eq . "nginx") (hasSuffix "=nginx" .) }}true{{ end }}{{ end }}
{{- range .Values.classProfiles }}{{ if hasSuffix "=nginx" . }}true{{ end }}{{ end }}
{{- end }}

{{/* Non-empty when a class uses the qcloud profile: a shadow class `qcloud` or `NAME=qcloud`, a class profile `NAME=qcloud`. */}}
{{- define "shunt.servesQcloud" -}}
{{- range .Values.shadowClasses }}{{ if or (eq . "qcloud") (hasSuffix "=qcloud" .) }}true{{ end }}{{ end }}
{{- range .Values.classProfiles }}{{ if hasSuffix "=qcloud" . }}true{{ end }}{{ end }}
{{- end }}

{{/*
The classes shunt serves as its own (--ingress-class), as a JSON list: ingressClass.name, then
each class a classProfiles entry names, since a profile applies only to a class of ours.
*/}}
{{- define "shunt.ownClasses" -}}
{{- $classes := list .Values.ingressClass.name }}
{{- range .Values.classProfiles }}{{ $classes = append $classes (regexReplaceAll "=.*$" . "") }}{{ end }}
{{- $classes | uniq | toJson }}
{{- end }}

{{/* ingress-nginx's ConfigMap as --nginx-configmap takes it (NAMESPACE/NAME). */}}
{{- define "shunt.nginxConfigMap" -}}
{{- printf "%s/%s" .Values.nginxConfigMap.namespace .Values.nginxConfigMap.name }}
{{- end }}

{{/* Container args for `shunt run`. */}}
{{/* The extra Gateway listener ports (gatewayAPI.ports) as a JSON list; none without gatewayAPI. */}}
{{- define "shunt.gatewayPorts" -}}
{{- if .Values.gatewayAPI.enabled }}{{ .Values.gatewayAPI.ports | default list | toJson }}{{ else }}[]{{ end }}
{{- end }}

{{- define "shunt.args" -}}
- run
- --http-addr
- 0.0.0.0:8080
- --https-addr
- 0.0.0.0:8443
- --admin-addr
- 0.0.0.0:9090
{{- range include "shunt.gatewayPorts" . | fromJsonArray }}
- --gateway-port
- {{ printf "%v=0.0.0.0:%v" .port .containerPort | quote }}
{{- end }}
{{- range include "shunt.ownClasses" . | fromJsonArray }}
- --ingress-class
- {{ . | quote }}
{{- end }}
- --controller-name
- {{ .Values.ingressClass.controller | quote }}
{{- range .Values.shadowClasses }}
- --shadow-class
- {{ . | quote }}
{{- end }}
{{- range .Values.classProfiles }}
- --class-profile
- {{ . | quote }}
{{- end }}
{{- if include "shunt.servesNginx" . }}
- --nginx-configmap
- {{ include "shunt.nginxConfigMap" . | quote }}
{{- with .Values.nginxDefaultBackend }}
- --nginx-default-backend
- {{ . | quote }}
{{- end }}
{{- end }}
{{- range $host, $secret := .Values.shadowTls }}
- --shadow-tls
- {{ printf "%s=%s" $host $secret | quote }}
{{- end }}
{{- if .Values.watchIngressWithoutClass }}
- --watch-ingress-without-class
{{- end }}
{{- if not .Values.gatewayAPI.enabled }}
- --gateway-api=false
{{- else }}
{{- range .Values.shadowGatewayClasses }}
- --shadow-gateway-class
- {{ . | quote }}
{{- end }}
{{- end }}
{{- range .Values.watchNamespaces }}
- --watch-namespace
- {{ . | quote }}
{{- end }}
- --publish-service
- {{ printf "%s/%s" .Release.Namespace (include "shunt.fullname" .) | quote }}
{{- if .Values.publishHostname }}
- --publish-hostname
{{- end }}
- --election-id
- {{ default (include "shunt.suffixed" (list . "leader")) .Values.electionId | quote }}
- --drain-timeout
- {{ printf "%ds" (int .Values.drainTimeoutSeconds) | quote }}
- --log-format
- {{ .Values.logFormat | quote }}
{{- with .Values.trustedProxies }}
- --trusted-proxies
- {{ join "," . | quote }}
{{- end }}
{{- with .Values.defaultSslCertificate }}
- --default-ssl-certificate
- {{ . | quote }}
{{- end }}
{{- if .Values.coredns.manage }}
- --manage-coredns
- --coredns-target
- {{ .Values.coredns.target | quote }}
- --coredns-configmap
- {{ printf "%s/%s" .Values.coredns.configMap.namespace (include "shunt.corednsConfigMap" .) | quote }}
{{- range .Values.coredns.exclude }}
- --dns-exclude
- {{ . | quote }}
{{- end }}
{{- range .Values.coredns.domains }}
- --dns-domain
- {{ . | quote }}
{{- end }}
{{- with .Values.coredns.version }}
- --coredns-version
- {{ . | quote }}
{{- end }}
{{- if eq (.Values.coredns.shadowRewrite | default "refused") "all" }}
- --shadow-rewrite
- all
{{- end }}
{{- with .Values.coredns.nodeLocalDns }}
- --node-local-dns-configmap
- {{ printf "%s/%s" .configMap.namespace .configMap.name | quote }}
{{- if not .manage }}
- --manage-node-local-dns=false
{{- end }}
{{- end }}
{{- if .Values.coredns.loadBalancerServices }}
- --dns-loadbalancer-services
{{- end }}
{{- with .Values.coredns.pruneDelay }}
- --dns-prune-delay
- {{ . | quote }}
{{- end }}
{{- end }}
{{- with .Values.extraArgs }}
{{ toYaml . }}
{{- end }}
{{- end }}
