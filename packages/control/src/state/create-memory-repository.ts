import type { AuditEntry } from '../engine/audit-entry.ts';
import type { RecommendationRecord } from '../engine/control-types.ts';
import type {
  AuditFilter,
  ControlRepository,
  RecommendationFilter,
  StoredPolicies,
} from './control-repository.ts';

/** In-process repository for replay and backtests: same behaviour, nothing written to disk. */
export function createMemoryRepository(): ControlRepository {
  const recommendations = new Map<string, RecommendationRecord>();
  const audit: AuditEntry[] = [];
  let policies: StoredPolicies | null = null;
  const newestFirst = (a: RecommendationRecord, b: RecommendationRecord) =>
    a.createdNs === b.createdNs ? 0 : a.createdNs > b.createdNs ? -1 : 1;
  return {
    async saveRecommendations(records) {
      for (const r of records) recommendations.set(r.id, structuredClone(r));
    },
    async appendAudit(entries) {
      audit.push(...entries.map((e) => structuredClone(e)));
    },
    async listRecommendations(filter: RecommendationFilter) {
      return [...recommendations.values()]
        .filter((r) => !filter.states || filter.states.includes(r.state))
        .filter((r) => !filter.kind || r.kind === filter.kind)
        .sort(newestFirst)
        .slice(0, filter.limit)
        .map((r) => structuredClone(r));
    },
    async getRecommendation(id) {
      const r = recommendations.get(id);
      return r ? structuredClone(r) : null;
    },
    async loadActive() {
      return [...recommendations.values()]
        .filter((r) => r.state === 'proposed' || r.state === 'approved' || r.appliedNs !== null)
        .map((r) => structuredClone(r));
    },
    async listAudit(filter: AuditFilter) {
      return audit
        .filter((e) => !filter.recommendationId || e.recommendationId === filter.recommendationId)
        .slice(-filter.limit)
        .reverse()
        .map((e) => structuredClone(e));
    },
    async loadPolicies() {
      return policies ? structuredClone(policies) : null;
    },
    async savePolicies(next) {
      policies = structuredClone(next);
    },
  };
}
