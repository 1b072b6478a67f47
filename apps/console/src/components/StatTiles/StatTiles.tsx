import type { ReactNode } from 'react';

export interface StatTile {
  label: string;
  value: ReactNode;
  hint?: ReactNode;
  tone?: 'good' | 'bad' | 'warn' | 'neutral';
}

/** The few numbers an operator reads first. */
export function StatTiles({ tiles, testId }: { tiles: StatTile[]; testId?: string }) {
  return (
    <dl className="tiles" data-testid={testId}>
      {tiles.map((tile) => (
        <div key={tile.label} className={`tile tile--${tile.tone ?? 'neutral'}`}>
          <dt className="tile__label">{tile.label}</dt>
          <dd className="tile__value">{tile.value}</dd>
          {tile.hint ? <dd className="tile__hint">{tile.hint}</dd> : null}
        </div>
      ))}
    </dl>
  );
}
