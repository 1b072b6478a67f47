export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  if (!outcome) return <span className="muted">—</span>;
  return <span className={`badge badge--outcome-${outcome === 'success' ? 'ok' : 'bad'}`}>{outcome}</span>;
}
