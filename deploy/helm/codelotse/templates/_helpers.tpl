{{/* codelotse.fullname: the release's resource name prefix. */}}
{{- define "codelotse.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* codelotse.selectorLabels: the labels every pod of the release carries. */}}
{{- define "codelotse.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "codelotse.labels" -}}
{{ include "codelotse.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "codelotse.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* codelotse.managedEnv: the variables the chart sets itself; extraEnv may not name them. */}}
{{- define "codelotse.managedEnv" -}}
QUAVON_MCP_CONTEXT QUAVON_EDITION QUAVON_MCP_PRIVATE_HOSTS QUAVON_TRUSTED_PROXIES QUAVON_MCP_ALLOWED_URLS QUAVON_MCP_MAX_CALLS_PER_MINUTE QUAVON_MCP_RECHECK_INTERVAL QUAVON_AUDIT_WEBHOOK_URL QUAVON_AUDIT_WEBHOOK_SECRET QUAVON_HTTP_ADDR QUAVON_LOG_LEVEL QUAVON_PUBLIC_URL QUAVON_DATABASE_URL QUAVON_ENCRYPTION_KEYS QUAVON_OAUTH_SIGNING_KEYS QUAVON_LLM_PROVIDER QUAVON_LLM_BASE_URL QUAVON_LLM_MODEL QUAVON_LLM_API_KEY OTEL_EXPORTER_OTLP_ENDPOINT OTEL_SERVICE_NAME
{{- end -}}

{{/*
codelotse.validate refuses combinations of values that must never render.
Under the air-gap profile (MC10) nothing may turn MCP context on and nothing
may open egress beyond the database and DNS.
*/}}
{{- define "codelotse.validate" -}}
{{- $v := .Values -}}
{{- if not $v.database.existingSecret -}}
{{- fail "codelotse: database.existingSecret is required: the name of an existing Secret holding the PostgreSQL DSN (the chart never takes the DSN as a value)" -}}
{{- end -}}
{{- if and (eq (toString $v.mcpContext) "allowed") (not $v.encryption.existingSecret) -}}
{{- fail "codelotse: mcpContext=allowed needs encryption.existingSecret, the Secret holding the credential key ring (QUAVON_ENCRYPTION_KEYS)" -}}
{{- end -}}
{{- if not (has $v.mcpContext (list "allowed" "disabled")) -}}
{{- fail (printf "codelotse: mcpContext must be \"allowed\" or \"disabled\", not %q" (toString $v.mcpContext)) -}}
{{- end -}}
{{- if not (has $v.edition (list "self-hosted" "enterprise")) -}}
{{- fail (printf "codelotse: edition must be \"self-hosted\" or \"enterprise\", not %q" (toString $v.edition)) -}}
{{- end -}}
{{- include "codelotse.validateRecheckInterval" . -}}
{{- $wh := $v.auditWebhook | default dict -}}
{{- $whSecret := $wh.secret | default dict -}}
{{- if and $wh.url (not $whSecret.name) -}}
{{- fail "codelotse: auditWebhook.url needs auditWebhook.secret.name and auditWebhook.secret.key, the existing Secret holding the webhook's signing secret (QUAVON_AUDIT_WEBHOOK_SECRET): both or neither" -}}
{{- end -}}
{{- if and $whSecret.name (not $wh.url) -}}
{{- fail "codelotse: auditWebhook.secret.name is set without auditWebhook.url, the https address of the audit webhook (QUAVON_AUDIT_WEBHOOK_URL): both or neither" -}}
{{- end -}}
{{- $managed := splitList " " (include "codelotse.managedEnv" .) -}}
{{- range $component := list "api" "worker" "migrate" -}}
{{- range (index $v $component).extraEnv -}}
{{- if and $v.airgap (eq .name "QUAVON_MCP_CONTEXT") -}}
{{- fail (printf "codelotse: the air-gap profile keeps QUAVON_MCP_CONTEXT=disabled in every container; %s.extraEnv may not set it" $component) -}}
{{- end -}}
{{- if has .name $managed -}}
{{- fail (printf "codelotse: %s.extraEnv may not set %s; the chart sets it from its own values" $component .name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $v.airgap -}}
{{- if ne $v.mcpContext "disabled" -}}
{{- fail (printf "codelotse: the air-gap profile requires mcpContext=disabled (QUAVON_MCP_CONTEXT=disabled in every container), not %q" (toString $v.mcpContext)) -}}
{{- end -}}
{{- if not $v.networkPolicy.enabled -}}
{{- fail "codelotse: the air-gap profile requires networkPolicy.enabled=true (egress only to the database and DNS)" -}}
{{- end -}}
{{- if $v.networkPolicy.extraEgress -}}
{{- fail "codelotse: the air-gap profile allows egress only to the database and DNS; networkPolicy.extraEgress must be empty" -}}
{{- end -}}
{{- range concat $v.database.networkPeers $v.networkPolicy.dns -}}
{{- if and .ipBlock (has .ipBlock.cidr (list "0.0.0.0/0" "::/0")) -}}
{{- fail (printf "codelotse: the air-gap profile refuses egress to %s; name the database's and the DNS servers' own addresses" .ipBlock.cidr) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
codelotse.validateRecheckInterval refuses an mcpRecheckInterval the service
would refuse at startup: a Go duration (the schema checks its form) shorter
than 10s but not zero. The duration is summed up from its parts in
seconds (1h30m, 90s, 2.5m, 10000ms).
*/}}
{{- define "codelotse.validateRecheckInterval" -}}
{{- $ri := .Values.mcpRecheckInterval -}}
{{- if and (not (kindIs "invalid" $ri)) (ne (toString $ri) "") -}}
{{- /* Each unit as seconds: a multiplier over a divisor, both exact. */ -}}
{{- $unit := dict "ns" (list 1.0 1000000000.0) "us" (list 1.0 1000000.0) "µs" (list 1.0 1000000.0) "μs" (list 1.0 1000000.0) "ms" (list 1.0 1000.0) "s" (list 1.0 1.0) "m" (list 60.0 1.0) "h" (list 3600.0 1.0) -}}
{{- $seconds := 0.0 -}}
{{- range regexFindAll "([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h)" (toString $ri) -1 -}}
{{- $n := regexFind "^[0-9.]+" . -}}
{{- $u := index $unit (trimPrefix $n .) -}}
{{- $seconds = addf $seconds (divf (mulf (float64 $n) (index $u 0)) (index $u 1)) -}}
{{- end -}}
{{- if and (gt $seconds 0.0) (lt $seconds 10.0) -}}
{{- fail (printf "codelotse: mcpRecheckInterval must be \"0\" (off) or a Go duration of at least 10s (1h, 30m), not %q" (toString $ri)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* codelotse.env: the environment of every container; dict "root" . "component" NAME. */}}
{{- define "codelotse.env" -}}
{{- $v := .root.Values -}}
{{- range (index $v .component).extraEnv }}
- name: {{ .name | quote }}
  {{- if hasKey . "valueFrom" }}
  valueFrom:
    {{- toYaml .valueFrom | nindent 4 }}
  {{- else }}
  value: {{ if hasKey . "value" }}{{ .value | toString | quote }}{{ else }}""{{ end }}
  {{- end }}
{{- end }}
- name: QUAVON_MCP_CONTEXT
  value: {{ $v.mcpContext | quote }}
- name: QUAVON_EDITION
  value: {{ $v.edition | quote }}
- name: QUAVON_MCP_PRIVATE_HOSTS
  value: {{ join "," $v.privateHosts | quote }}
- name: QUAVON_TRUSTED_PROXIES
  value: {{ join "," $v.trustedProxies | quote }}
{{- with $v.mcpAllowedURLs }}
- name: QUAVON_MCP_ALLOWED_URLS
  value: {{ join "," . | quote }}
{{- end }}
{{- if not (kindIs "invalid" $v.mcpMaxCallsPerMinute) }}
- name: QUAVON_MCP_MAX_CALLS_PER_MINUTE
  value: {{ $v.mcpMaxCallsPerMinute | int | toString | quote }}
{{- end }}
{{- if and (not (kindIs "invalid" $v.mcpRecheckInterval)) (ne (toString $v.mcpRecheckInterval) "") }}
- name: QUAVON_MCP_RECHECK_INTERVAL
  value: {{ toString $v.mcpRecheckInterval | quote }}
{{- end }}
{{- $wh := $v.auditWebhook | default dict }}
{{- with $wh.url }}
- name: QUAVON_AUDIT_WEBHOOK_URL
  value: {{ . | quote }}
- name: QUAVON_AUDIT_WEBHOOK_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ $wh.secret.name | quote }}
      key: {{ $wh.secret.key | quote }}
{{- end }}
- name: QUAVON_HTTP_ADDR
  value: "0.0.0.0:8080"
- name: QUAVON_LOG_LEVEL
  value: {{ $v.logLevel | quote }}
{{- with $v.publicURL }}
- name: QUAVON_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
- name: QUAVON_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $v.database.existingSecret | quote }}
      key: {{ $v.database.secretKey | quote }}
{{- with $v.encryption.existingSecret }}
- name: QUAVON_ENCRYPTION_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: {{ $v.encryption.secretKey | quote }}
{{- end }}
{{- $sk := $v.oauthSigning | default dict }}
{{- with $sk.existingSecret }}
- name: QUAVON_OAUTH_SIGNING_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: {{ $sk.secretKey | quote }}
{{- end }}
- name: QUAVON_LLM_PROVIDER
  value: {{ $v.llm.provider | quote }}
{{- with $v.llm.baseURL }}
- name: QUAVON_LLM_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- with $v.llm.model }}
- name: QUAVON_LLM_MODEL
  value: {{ . | quote }}
{{- end }}
{{- with $v.llm.existingSecret }}
- name: QUAVON_LLM_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: {{ $v.llm.secretKey | quote }}
{{- end }}
{{- with $v.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ $v.otel.serviceName | quote }}
{{- end }}
{{- end -}}

{{/* codelotse.podSecurityContext and codelotse.securityContext: locked down, not values. */}}
{{- define "codelotse.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "codelotse.securityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* codelotse.deployment: the api and worker Deployments; dict "root" . "component" NAME "command" ARG. */}}
{{- define "codelotse.deployment" -}}
{{- $root := .root -}}
{{- $c := index $root.Values .component -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "codelotse.fullname" $root }}-{{ .component }}
  labels:
    {{- include "codelotse.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  replicas: {{ $c.replicas }}
  selector:
    matchLabels:
      {{- include "codelotse.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
  template:
    metadata:
      labels:
        {{- include "codelotse.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $root.Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "codelotse.fullname" $root }}
      automountServiceAccountToken: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- range . }}
        - name: {{ . | quote }}
        {{- end }}
      {{- end }}
      securityContext:
        {{- include "codelotse.podSecurityContext" $root | nindent 8 }}
      {{- with $c.terminationGracePeriodSeconds }}
      terminationGracePeriodSeconds: {{ . }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "codelotse.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .command | quote }}]
          env:
            {{- include "codelotse.env" (dict "root" $root "component" .component) | nindent 12 }}
          ports:
            - name: http
              containerPort: 8080
              protocol: TCP
          readinessProbe:
            httpGet: {path: /readyz, port: http}
            periodSeconds: 10
            failureThreshold: 3
          livenessProbe:
            httpGet: {path: /healthz, port: http}
            periodSeconds: 20
            failureThreshold: 3
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- include "codelotse.securityContext" $root | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}

{{/* codelotse.egress: the database and DNS rules, the only egress under the air-gap profile. */}}
{{- define "codelotse.egress" -}}
- to:
    {{- toYaml .Values.database.networkPeers | nindent 4 }}
  ports:
    - port: {{ .Values.database.port }}
      protocol: TCP
- to:
    {{- toYaml .Values.networkPolicy.dns | nindent 4 }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end -}}
