import { type AuditEntry, describeAction, describeTarget } from '../../api/control.ts';
import { formatDateTime } from '../../lib/format.ts';

/** Every decision and action, newest first: who, what, on which target, and how it ended. */
export function AuditLog({ entries }: { entries: AuditEntry[] }) {
  return (
    <div className="table-wrap">
      <table className="table table--compact table--wide" data-testid="audit-log">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Target</th>
            <th scope="col">Action</th>
            <th scope="col">By</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td className="nowrap">{formatDateTime(e.atMs)}</td>
              <td>
                <span className="badge badge--kind">{e.type.replace('_', ' ')}</span>
              </td>
              <td>{describeTarget(e.target) || '—'}</td>
              <td>{e.kind || e.action ? describeAction(e.kind, e.action) : '—'}</td>
              <td>{e.actor ?? '—'}</td>
              <td>
                {e.result ?? '—'}
                {e.detail ? <div className="cell-sub">{e.detail}</div> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
