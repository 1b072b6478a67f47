// Hop classification (docs/telemetry.md): a rule list tried in order — attribute, then span name
// pattern, then service.name pattern. An unclassified span keeps hop = null and is never dropped.

export const HOPS = [
  'gateway',
  'router',
  'cache',
  'scheduler',
  'runtime',
  'prefill',
  'decode',
  'stream',
  'tool',
] as const;
export type Hop = (typeof HOPS)[number];

export function isHop(value: unknown): value is Hop {
  return typeof value === 'string' && (HOPS as readonly string[]).includes(value);
}

/** One classification rule; the first matching rule wins. Patterns are JavaScript regular expressions. */
export interface HopRule {
  hop: Hop;
  spanName?: string;
  serviceName?: string;
  /** Match when this attribute is present (and equals `attributeEquals` if given). */
  attribute?: string;
  attributeEquals?: string;
}

/** Defaults for vLLM, llm-d, SGLang and common gateways; config rules are tried before these. */
export const DEFAULT_HOP_RULES: readonly HopRule[] = [
  // llm-d
  { hop: 'gateway', spanName: '^gateway\\.request$' },
  { hop: 'router', spanName: '^llm_d\\.epp\\.' },
  { hop: 'prefill', spanName: '^llm_d\\.pd_proxy\\.prefill$' },
  { hop: 'decode', spanName: '^llm_d\\.pd_proxy\\.decode$' },
  { hop: 'router', spanName: '^llm_d\\.pd_proxy\\.request$' },
  // vLLM
  { hop: 'runtime', spanName: '^llm_request$' },
  // SGLang: the request span "{role} Req {rid[:8]}" (role empty, prefill or decode), stage children
  { hop: 'runtime', spanName: '^(?:\\w+)?\\s*Req\\b' },
  { hop: 'scheduler', spanName: '(?:^|[._ ])(?:schedul|queue)' },
  { hop: 'prefill', spanName: '(?:^|[._ ])prefill' },
  { hop: 'decode', spanName: '(?:^|[._ ])decode' },
  { hop: 'cache', spanName: '(?:^|[._ ])(?:cache|prefix)' },
  { hop: 'router', spanName: '(?:^|[._ ])rout' },
  { hop: 'stream', spanName: '(?:^|[._ ])stream' },
  { hop: 'tool', spanName: '^execute_tool\\b' },
  // Service-name fallbacks
  { hop: 'gateway', serviceName: 'gateway|envoy|kong|nginx|litellm' },
  { hop: 'router', serviceName: 'router|epp' },
  { hop: 'runtime', serviceName: 'vllm|sglang|tensorrt|trtllm|tgi' },
];
