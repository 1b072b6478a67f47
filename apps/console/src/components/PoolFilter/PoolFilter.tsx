import { useId } from 'react';

/** A pool selector; "All pools" clears the filter. Keeps an unknown current value selectable. */
export function PoolFilter({
  pools,
  value,
  onChange,
  label = 'Pool',
}: {
  pools: string[];
  value: string | null;
  onChange: (pool: string | null) => void;
  label?: string;
}) {
  const id = useId();
  const options = [...new Set([...pools, ...(value ? [value] : [])])].sort();
  return (
    <label className="field field--inline" htmlFor={id}>
      <span className="field__label">{label}</span>
      <select
        id={id}
        className="select"
        value={value ?? ''}
        onChange={(e) => onChange(e.target.value || null)}
      >
        <option value="">All pools</option>
        {options.map((pool) => (
          <option key={pool} value={pool}>
            {pool}
          </option>
        ))}
      </select>
    </label>
  );
}
