import type { DashboardList, DashboardWithId } from '@governor/conventions';
import { requestJson } from '../lib/api-client.ts';

export type { DashboardList, DashboardWithId };

export function fetchDashboards(signal?: AbortSignal): Promise<DashboardList> {
  return requestJson<DashboardList>('/api/dashboards', signal ? { signal } : {});
}

export function fetchDashboard(id: string, signal?: AbortSignal): Promise<DashboardWithId> {
  return requestJson<DashboardWithId>(`/api/dashboards/${encodeURIComponent(id)}`, signal ? { signal } : {});
}
