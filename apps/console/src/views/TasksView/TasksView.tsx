import { fetchSignals } from '../../api/signals.ts';
import { type TaskRow, fetchTasks } from '../../api/tasks.ts';
import { CostTable } from '../../components/CostTable/index.ts';
import { OutcomeBadge } from '../../components/OutcomeBadge/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { StatTiles } from '../../components/StatTiles/index.ts';
import { TableHead } from '../../components/TableHead/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { formatDateTime, formatMs, formatNumber, formatPercent, formatUsd } from '../../lib/format.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { useApi } from '../../lib/use-api.ts';
import { hrefFor } from '../../lib/url-state.ts';

export function TasksView() {
  const { range, refreshOptions, pending } = useTimeRange();
  const rangeKey = JSON.stringify([range.key, range.key === 'custom' ? range : null]);
  const key = (name: string) => (pending ? null : `${name} ${rangeKey}`);
  const fleet = useApi(key('tasks-fleet'), (s) => fetchSignals(range, '', s), refreshOptions);
  const byTenant = useApi(key('tasks-tenant'), (s) => fetchSignals(range, 'tenant', s), refreshOptions);
  const byWorkflow = useApi(
    key('tasks-workflow'),
    (s) => fetchSignals(range, 'workflow_type', s),
    refreshOptions,
  );
  const tasks = useApi(
    key('tasks-list'),
    (s) => fetchTasks({ fromMs: range.fromMs, toMs: range.toMs, limit: 500 }, s),
    refreshOptions,
  );

  return (
    <div className="view" data-testid="view-tasks">
      <AsyncContent state={fleet} isEmpty={(d) => (d.groups[0]?.tasks ?? 0) === 0} empty={null}>
        {(data) => {
          const g = data.groups[0]!;
          return (
            <StatTiles
              testId="task-kpis"
              tiles={[
                {
                  label: 'Tasks',
                  value: formatNumber(g.tasks),
                  hint: `${formatNumber(g.requests)} requests`,
                },
                {
                  label: 'Succeeded',
                  value: formatPercent(g.tasks > 0 ? g.successfulTasks / g.tasks : null),
                  hint: `${formatNumber(g.tasks - g.successfulTasks)} failed`,
                  tone: g.successfulTasks < g.tasks ? 'warn' : 'good',
                },
                { label: 'Success per $', value: formatNumber(g.successPerDollar) },
                { label: 'Cost per successful task', value: formatUsd(g.costPerSuccessfulTaskUsd) },
                { label: 'Fleet cost', value: formatUsd(g.costUsd) },
                { label: 'Retry ratio', value: formatPercent(g.retryRatio) },
              ]}
            />
          );
        }}
      </AsyncContent>
      <div className="grid">
        <Panel title="By tenant" subtitle="fleet cost allocated by GPU-time share" testId="tasks-by-tenant">
          <AsyncContent
            state={byTenant}
            isEmpty={(d) => d.groups.length === 0}
            empty={<EmptyState title="No tasks in this time range" />}
          >
            {(data) => <CostTable groups={data.groups} dimension="tenant" label="Tenant" />}
          </AsyncContent>
        </Panel>
        <Panel
          title="By workflow type"
          subtitle="agentic workflows; single requests count as one task"
          testId="tasks-by-workflow"
        >
          <AsyncContent
            state={byWorkflow}
            isEmpty={(d) => d.groups.length === 0}
            empty={<EmptyState title="No tasks in this time range" />}
          >
            {(data) => <CostTable groups={data.groups} dimension="workflow_type" label="Workflow type" />}
          </AsyncContent>
        </Panel>
      </div>
      <Panel
        title="Failed and retried work"
        subtitle="tasks that did not succeed or needed retries, and what they cost"
        testId="tasks-failed"
      >
        <AsyncContent
          state={tasks}
          isEmpty={(d) => selectWastedTasks(d.tasks).length === 0}
          empty={<EmptyState title="No failed or retried tasks in this time range" />}
        >
          {(data) => <WastedWork tasks={selectWastedTasks(data.tasks)} />}
        </AsyncContent>
      </Panel>
    </div>
  );
}

export function selectWastedTasks(tasks: TaskRow[]): TaskRow[] {
  return tasks.filter((t) => t.succeeded === false || (t.retries ?? 0) > 0);
}

function WastedWork({ tasks }: { tasks: TaskRow[] }) {
  const failed = tasks.filter((t) => t.succeeded === false);
  const failedCost = failed.reduce((sum, t) => sum + (t.costUsd ?? 0), 0);
  const retried = tasks.filter((t) => (t.retries ?? 0) > 0);
  return (
    <>
      <p className="summary-line" data-testid="wasted-summary">
        <strong>{failed.length}</strong> failed tasks cost <strong>{formatUsd(failedCost)}</strong> and earned
        nothing; <strong>{retried.length}</strong> tasks needed retries.
      </p>
      <div className="table-wrap">
        <table className="table table--compact">
          <TableHead
            columns={[
              'Start',
              'Task',
              'Tenant',
              'Workflow',
              'Outcome',
              { label: 'Retries', numeric: true },
              { label: 'Duration', numeric: true },
              { label: 'Cost', numeric: true },
            ]}
          />
          <tbody>
            {tasks.slice(0, 100).map((t) => (
              <tr key={`${t.taskId} ${t.startMs}`}>
                <td className="nowrap">{formatDateTime(t.startMs)}</td>
                <td className="mono">
                  {t.traceId ? (
                    <a href={hrefFor({ view: 'traces', traceId: t.traceId })}>{t.taskId.slice(0, 14)}</a>
                  ) : (
                    t.taskId.slice(0, 14)
                  )}
                </td>
                <td>{t.tenant ?? '—'}</td>
                <td>{t.workflowType ?? '—'}</td>
                <td>
                  <OutcomeBadge outcome={t.outcome ?? (t.succeeded ? 'success' : 'error')} />
                </td>
                <td className="num">{formatNumber(t.retries)}</td>
                <td className="num">{formatMs(t.durationMs)}</td>
                <td className="num">{formatUsd(t.costUsd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
