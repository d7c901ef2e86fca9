{{- define "dw.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{ else }}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{ end }}
{{- end }}

{{- define "dw.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "dw.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "dw.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Worker Versioning: the build ID (the image tag unless set), and that build as a DNS label for names and labels. */}}
{{- define "dw.buildId" -}}
{{ .Values.worker.versioning.buildId | default (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "dw.buildLabel" -}}
{{ include "dw.buildId" . | lower | replace "." "-" | replace "_" "-" | replace "+" "-" | trunc 40 | trimSuffix "-" }}
{{- end }}

{{- define "dw.deploymentName" -}}
{{ .Values.worker.versioning.deploymentName | default (include "dw.fullname" .) }}
{{- end }}

{{/* The worker's Worker Deployment Version, for the workers and the hook that promotes them. */}}
{{- define "dw.versionEnv" -}}
- name: WORKER_DEPLOYMENT_NAME
  value: {{ include "dw.deploymentName" . | quote }}
- name: WORKER_BUILD_ID
  value: {{ include "dw.buildId" . | quote }}
{{- end }}

{{- define "dw.secret" -}}
{{- required "existingSecret is required: a Secret with DATABASE_URL, your tokens and your API keys (never put them in values)" .Values.existingSecret }}
{{- end }}

{{/*
The Secret of signing secrets the receiver mounts as SIGNING_SECRETS_DIR, and nothing else reads.
The lists it replaced (chart 0.x: receiver.signingSecretKeys, receiver.secretFiles) stop the render
instead of being ignored, which would start a receiver that verifies nothing.
*/}}
{{- define "dw.signingSecret" -}}
{{- if or (hasKey .Values.receiver "signingSecretKeys") (hasKey .Values.receiver "secretFiles") }}
{{- fail "receiver.signingSecretKeys and receiver.secretFiles are gone: put the signing secrets, keys and signed URLs in a Secret of their own, each key named as its variable, and name it in receiver.signingSecret (docs/kubernetes.md)" }}
{{- end }}
{{- required "receiver.signingSecret is required: a Secret holding only the signing secrets, keys and signed URLs, each key named as its variable (STRIPE_WEBHOOK_SECRET, GITHUB_WEBHOOK_SECRET_PREVIOUS, …)" .Values.receiver.signingSecret }}
{{- end }}

{{/*
The keys of existingSecret one process gets, each as its own variable: a key the Secret lacks is
left unset (optional), so one Secret serves every process and each gets only what it reads.
Called with (dict "root" . "keys" (list …)).
*/}}
{{- define "dw.secretEnv" -}}
{{- $secret := include "dw.secret" .root }}
{{- range $key := uniq .keys }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $key }}
      optional: true
{{- end }}
{{- end }}

{{/* What every process reads: the Temporal connection, the shared settings, and the Secret. */}}
{{- define "dw.env" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: DATA_DIR
  value: /tmp/durable-webhooks
{{- if .Values.temporal.tls.enabled }}
- name: TEMPORAL_TLS
  value: "true"
- name: TEMPORAL_TLS_CLIENT_CERT_PATH
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_CLIENT_KEY_PATH
  value: /etc/temporal-tls/tls.key
{{- if .Values.temporal.tls.serverCA }}
- name: TEMPORAL_TLS_SERVER_CA_CERT_PATH
  value: /etc/temporal-tls/ca.crt
{{- end }}
{{- with .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: TEMPORAL_TLS
  value: "true"
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKey.existingSecret }}
      key: {{ .Values.temporal.apiKey.key }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{- define "dw.volumes" -}}
- name: tmp
  emptyDir: {}
{{- if .Values.temporal.tls.enabled }}
- name: temporal-tls
  secret:
    secretName: {{ required "temporal.tls.existingSecret is required with temporal.tls.enabled" .Values.temporal.tls.existingSecret }}
{{- end }}
{{- end }}

{{- define "dw.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .Values.temporal.tls.enabled }}
- name: temporal-tls
  mountPath: /etc/temporal-tls
  readOnly: true
{{- end }}
{{- end }}

{{- define "dw.pod" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
automountServiceAccountToken: false
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  {{- include "dw.volumes" . | nindent 2 }}
{{- end }}
