/** A header cell: a plain label, or one whose values are numbers (right-aligned) or that narrow screens hide. */
export type TableColumn = string | { label: string; numeric?: boolean; hideNarrow?: boolean };

function classNameOf(column: TableColumn): string | undefined {
  if (typeof column === 'string') return undefined;
  const classes = [column.numeric ? 'num' : '', column.hideNarrow ? 'hide-narrow' : ''].filter(
    (c) => c !== '',
  );
  return classes.length > 0 ? classes.join(' ') : undefined;
}

export function TableHead({ columns }: { columns: readonly TableColumn[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => {
          const label = typeof column === 'string' ? column : column.label;
          return (
            <th key={label} scope="col" className={classNameOf(column)}>
              {label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
