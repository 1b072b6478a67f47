import type { Recommendation } from '@governor/conventions';
import type { AuditView } from '@governor/control';
import { afterEach, describe, expect, test } from 'vitest';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  type TestGovernor,
  WARM_UP_MS,
  runTicks,
  startTestGovernor,
} from './fixtures/control-test-governor.ts';

// The guards ("when it may change") name every hold: in the audit log when it starts, and on the
// open recommendation it keeps waiting, so an operator sees why Governor is not acting.

let g: TestGovernor | null = null;
afterEach(async () => {
  await g?.close();
  g = null;
});

const queued = { queueMs: 3000 };

async function held(): Promise<AuditView[]> {
  const { body } = await g!.request<{ actions: AuditView[] }>('GET', '/api/actions?limit=1000');
  return body.actions.filter((a) => a.decision === 'held');
}

const scaleUpOn = (recs: Recommendation[], pool: string) =>
  recs.find(
    (r) =>
      r.kind === 'scale' && r.target.pool === pool && (r.action.to as number) > (r.action.from as number),
  );

describe('guards name their holds', () => {
  test('a rejected change asked again is held once in the audit, not re-proposed at every tick', async () => {
    g = await startTestGovernor();
    await runTicks(g, [H100_TRAFFIC, A100_TRAFFIC], 0, WARM_UP_MS);
    const [first] = await runTicks(
      g,
      [{ ...H100_TRAFFIC, ...queued }, A100_TRAFFIC],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const proposal = scaleUpOn(first!.recommendations, 'h100-east');
    expect(proposal).toBeDefined();
    const rejected = await g.request('POST', `/api/recommendations/${proposal!.id}/reject`, { by: 'alice' });
    expect(rejected.status).toBe(200);
    expect(await held()).toEqual([]);

    // The queue persists for three more ticks: the detector keeps asking, the guard keeps holding.
    const later = await runTicks(
      g,
      [{ ...H100_TRAFFIC, ...queued }, A100_TRAFFIC],
      WARM_UP_MS + 30_000,
      WARM_UP_MS + 120_000,
    );
    expect(later).toHaveLength(3);
    for (const tick of later) expect(scaleUpOn(tick.recommendations, 'h100-east')).toBeUndefined();
    const holds = await held();
    expect(holds).toHaveLength(1);
    expect(holds[0]).toMatchObject({
      actor: 'guard:rejected_recently',
      kind: 'scale',
      target: { pool: 'h100-east' },
      recommendationId: null,
      result: 'not proposed',
    });
    expect(holds[0]!.reason).toMatch(/rejected/);
    expect(holds[0]!.details).toMatchObject({ direction: 'increase' });
  });
});
