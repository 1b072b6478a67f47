import type { SchemaColumn } from '../../api/sql.ts';

/** The documented views and their columns; a click inserts a name or starts a query. */
export function SchemaBrowser({
  columns,
  onInsert,
  onQueryView,
}: {
  columns: SchemaColumn[];
  onInsert: (text: string) => void;
  onQueryView: (view: string) => void;
}) {
  const views = [...new Set(columns.map((c) => c.table))];
  return (
    <div className="schema" data-testid="schema-browser">
      {views.map((view) => (
        <details key={view} className="schema__view" open={view === 'spans'}>
          <summary>
            <span className="mono">{view}</span>
            <span className="muted"> {columns.filter((c) => c.table === view).length}</span>
          </summary>
          <div className="schema__actions">
            <button
              type="button"
              className="button button--ghost button--small"
              onClick={() => onQueryView(view)}
            >
              Query {view}
            </button>
          </div>
          <ul className="schema__columns">
            {columns
              .filter((c) => c.table === view)
              .map((c) => (
                <li key={c.name}>
                  <button
                    type="button"
                    className="schema__column"
                    onClick={() => onInsert(c.name)}
                    title={`Insert ${c.name}`}
                  >
                    <span className="mono">{c.name}</span>
                    <span className="schema__type">{c.type.toLowerCase()}</span>
                  </button>
                </li>
              ))}
          </ul>
        </details>
      ))}
    </div>
  );
}
