{{/*
Names and labels shared by the chart's objects.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "trainvitals.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: fullnameOverride, else the release's name with the chart's
appended unless it holds it already. At most 63 characters (a DNS label).
*/}}
{{- define "trainvitals.fullname" -}}
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

{{/* The chart's name and version, for the helm.sh/chart label. */}}
{{- define "trainvitals.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* What selects the agent's pods: fixed for the life of the DaemonSet. */}}
{{- define "trainvitals.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainvitals.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Every object's labels. */}}
{{- define "trainvitals.labels" -}}
helm.sh/chart: {{ include "trainvitals.chart" . }}
{{ include "trainvitals.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | toString | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: node-agent
app.kubernetes.io/part-of: trainvitals
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The pod's ServiceAccount. */}}
{{- define "trainvitals.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "trainvitals.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The container image: repository:tag, the tag defaulting to appVersion. */}}
{{- define "trainvitals.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
