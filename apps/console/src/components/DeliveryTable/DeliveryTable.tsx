import type { DeliveryView } from '../../api/alerts.ts';
import { isoToMs } from '../../api/alerts.ts';
import { formatDateTime } from '../../lib/format.ts';

const STATUS_TONE: Record<DeliveryView['status'], string> = {
  delivered: 'ok',
  pending: 'pending',
  dead: 'bad',
};

/** Notification deliveries (wall-clock times): receiver, what was sent, how it ended. */
export function DeliveryTable({ deliveries, testId }: { deliveries: DeliveryView[]; testId?: string }) {
  return (
    <div className="table-wrap">
      <table className="table table--compact" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Receiver</th>
            <th scope="col">Notification</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Attempts
            </th>
            <th scope="col">Last error</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td className="nowrap">
                {formatDateTime(isoToMs(d.finishedAt ?? d.lastAttemptAt ?? d.createdAt))}
              </td>
              <td>
                {d.receiver}
                <div className="cell-sub">{d.receiverType}</div>
              </td>
              <td title={d.groupKey}>
                {d.kind === 'test' ? 'test notification' : d.notificationStatus}
                {d.fingerprints.length > 1 ? (
                  <div className="cell-sub">{d.fingerprints.length} alerts</div>
                ) : null}
              </td>
              <td>
                <span className={`badge badge--delivery-${STATUS_TONE[d.status] ?? 'pending'}`}>
                  {d.status}
                </span>
              </td>
              <td className="num">{d.attempts}</td>
              <td className="cell-wrap">
                {d.lastError ?? ''}
                {d.lastHttpStatus ? <div className="cell-sub">HTTP {d.lastHttpStatus}</div> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
