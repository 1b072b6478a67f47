export const VIEWS = [
  { id: 'fleet', label: 'Fleet', title: 'Fleet overview' },
  { id: 'hops', label: 'Hops', title: 'Hop attribution' },
  { id: 'traces', label: 'Traces', title: 'Traces' },
  { id: 'tasks', label: 'Tasks & cost', title: 'Tasks and cost' },
  { id: 'recommendations', label: 'Recommendations', title: 'Recommendations' },
  { id: 'policies', label: 'Policies', title: 'Auto-apply policies' },
  { id: 'alerts', label: 'Alerts', title: 'Alerts' },
  { id: 'sql', label: 'SQL', title: 'SQL console' },
  { id: 'dashboards', label: 'Dashboards', title: 'Dashboards' },
  { id: 'storage', label: 'Storage', title: 'Storage and retention' },
] as const;

export type ViewId = (typeof VIEWS)[number]['id'];

export function resolveView(value: string | undefined): ViewId {
  return VIEWS.find((v) => v.id === value)?.id ?? 'fleet';
}
