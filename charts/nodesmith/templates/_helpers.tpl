{{/* The chart's name, and the objects' full name (the release's name when it already says nodesmith). */}}
{{- define "nodesmith.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nodesmith.fullname" -}}
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

{{- define "nodesmith.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nodesmith.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "nodesmith.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "nodesmith.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "nodesmith.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "nodesmith.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "nodesmith.image" -}}
{{- $tag := default .Chart.AppVersion .Values.controller.image.tag }}
{{- if .Values.controller.image.digest }}
{{- printf "%s:%s@%s" .Values.controller.image.repository $tag .Values.controller.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.controller.image.repository $tag }}
{{- end }}
{{- end }}

{{/* FEATURE_GATES as the controller reads it: Name=bool,... in Karpenter's spelling. */}}
{{- define "nodesmith.featureGates" -}}
{{- $g := .Values.settings.featureGates -}}
NodeRepair={{ $g.nodeRepair }},ReservedCapacity={{ $g.reservedCapacity }},SpotToSpotConsolidation={{ $g.spotToSpotConsolidation }},NodeOverlay={{ $g.nodeOverlay }},StaticCapacity={{ $g.staticCapacity }},CapacityBuffer={{ $g.capacityBuffer }}
{{- end }}

{{/*
The node-class resources each provider declares (its plugin's nodeclass_kinds): the controller watches them and
writes their status, so its ClusterRole names exactly these.
*/}}
{{- define "nodesmith.nodeClassResources" -}}
{{- $kinds := dict
  "sim" (list (dict "group" "nodesmith.io" "resources" (list "simnodeclasses")) (dict "group" "karpenter.k8s.aws" "resources" (list "ec2nodeclasses" "awsnodetemplates")))
  "aws" (list (dict "group" "karpenter.k8s.aws" "resources" (list "ec2nodeclasses" "awsnodetemplates")))
  "azure" (list (dict "group" "karpenter.azure.com" "resources" (list "aksnodeclasses")))
  "alibaba" (list (dict "group" "karpenter.k8s.alibabacloud" "resources" (list "ecsnodeclasses")))
-}}
{{- $found := get $kinds .Values.provider.name -}}
{{- if not $found -}}
{{- fail (printf "provider.name %q: not a provider this chart knows (sim, aws, azure, alibaba)" .Values.provider.name) -}}
{{- end -}}
{{- toJson $found -}}
{{- end }}

{{/*
A CRD the chart installs from one of its files outside crds/ (dict "root" $ "file" PATH): the chart's labels added, and
kept when the release is uninstalled, as Helm keeps crds/, so the objects of that kind survive.
*/}}
{{- define "nodesmith.crd" -}}
{{- $crd := .root.Files.Get .file | fromYaml }}
{{- if not $crd.spec }}
{{- fail (printf "%s: the chart has no such CRD" .file) }}
{{- end }}
{{- $meta := $crd.metadata }}
{{- $_ := set $meta "labels" (merge (dict) ($meta.labels | default dict) (include "nodesmith.labels" .root | fromYaml)) }}
{{- $_ := set $meta "annotations" (merge (dict "helm.sh/resource-policy" "keep") ($meta.annotations | default dict)) }}
---
{{ toYaml $crd }}
{{- end }}
