// Apart from self-tracing-spans.ts so the decode workers can tell Governor's own spans without
// loading OpenTelemetry.

/** service.name of Governor's own spans; batches made only of such spans are ingested untraced. */
export const SELF_SERVICE_NAME = 'governor';
