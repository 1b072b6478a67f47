import type { AlertView } from '../../api/alerts.ts';
import { isoToMs } from '../../api/alerts.ts';
import { formatDateTime, formatNumber } from '../../lib/format.ts';
import { hrefFor } from '../../lib/url-state.ts';

export function AlertTable({ alerts, history = false }: { alerts: AlertView[]; history?: boolean }) {
  return (
    <div className="table-wrap">
      <table className="table" data-testid={history ? 'alert-history' : 'alert-table'}>
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Alert</th>
            <th scope="col">Labels</th>
            <th scope="col" className="num">
              Value
            </th>
            <th scope="col">{history ? 'Fired' : 'Since'}</th>
            {history ? <th scope="col">Resolved</th> : null}
            <th scope="col">Receivers</th>
          </tr>
        </thead>
        <tbody>
          {alerts.map((a) => (
            <tr key={a.id}>
              <td>
                <span className={`badge badge--alert-${a.state}`}>{a.state}</span>
                {a.severity ? <div className="cell-sub">{a.severity}</div> : null}
              </td>
              <td>
                <strong>{a.rule}</strong>
                {a.annotations.summary || a.annotations.description ? (
                  <div className="cell-sub">{a.annotations.summary ?? a.annotations.description}</div>
                ) : null}
              </td>
              <td>
                {Object.entries(a.labels)
                  .filter(([k]) => k !== 'alertname' && k !== 'severity')
                  .map(([k, v]) =>
                    k === 'pool' ? (
                      <a key={k} className="label-chip" href={hrefFor({ view: 'fleet', pool: v })}>
                        {k}={v}
                      </a>
                    ) : (
                      <span key={k} className="label-chip">
                        {k}={v}
                      </span>
                    ),
                  )}
              </td>
              <td className="num">{formatNumber(a.value)}</td>
              <td className="nowrap">{formatDateTime(isoToMs(a.startsAt ?? a.activeAt))}</td>
              {history ? <td className="nowrap">{formatDateTime(isoToMs(a.endsAt))}</td> : null}
              <td>{a.receivers.join(', ') || '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
