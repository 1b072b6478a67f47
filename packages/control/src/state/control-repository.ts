import type { PolicyConfig, RecommendationKind, RecommendationState } from '@governor/conventions';
import type { AuditEntry } from '../engine/audit-entry.ts';
import type { RecommendationRecord } from '../engine/control-types.ts';

// Where recommendations, the audit log and API-set policies live: DuckDB for a running Governor,
// memory for replay (a backtest must not write into the history it reads).

export interface RecommendationFilter {
  states?: readonly RecommendationState[];
  kind?: RecommendationKind;
  limit: number;
}

export interface AuditFilter {
  recommendationId?: string;
  limit: number;
}

export interface StoredPolicies {
  configHash: string;
  policies: PolicyConfig[];
  updatedBy: string;
  updatedAtMs: number;
}

export interface ControlRepository {
  saveRecommendations(records: readonly RecommendationRecord[]): Promise<void>;
  appendAudit(entries: readonly AuditEntry[]): Promise<void>;
  /** Newest first. */
  listRecommendations(filter: RecommendationFilter): Promise<RecommendationRecord[]>;
  getRecommendation(id: string): Promise<RecommendationRecord | null>;
  /** Recommendations the engine keeps working on after a restart: open ones and every applied one. */
  loadActive(): Promise<RecommendationRecord[]>;
  /** Newest first. */
  listAudit(filter: AuditFilter): Promise<AuditEntry[]>;
  loadPolicies(): Promise<StoredPolicies | null>;
  savePolicies(policies: StoredPolicies): Promise<void>;
}
