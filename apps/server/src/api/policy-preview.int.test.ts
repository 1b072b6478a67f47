import { afterEach, describe, expect, test } from 'vitest';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  type TestGovernor,
  WARM_UP_MS,
  runTicks,
  startTestGovernor,
} from './fixtures/control-test-governor.ts';

// POST /api/policies/preview: what edited policies would do with the open recommendations, by the
// control tick's own gate, without changing the policies in force.

let g: TestGovernor | null = null;
afterEach(async () => {
  await g?.close();
  g = null;
});

interface PreviewEntry {
  recommendationId: string;
  kind: string;
  target: { pool?: string };
  policy: string | null;
  decision: string;
  action: Record<string, unknown>;
  note: string;
}

describe('policy preview', () => {
  test('names the open recommendations a policy would auto-apply, step-limited, and changes nothing', async () => {
    g = await startTestGovernor();
    await runTicks(g, [H100_TRAFFIC, A100_TRAFFIC], 0, WARM_UP_MS);
    await runTicks(g, [{ ...H100_TRAFFIC, queueMs: 3000 }, A100_TRAFFIC], WARM_UP_MS, WARM_UP_MS + 30_000);
    const open = (
      await g.request<{ recommendations: { id: string; kind: string; target: { pool?: string } }[] }>(
        'GET',
        '/api/recommendations?state=proposed',
      )
    ).body.recommendations;
    const scaleUp = open.find((r) => r.kind === 'scale' && r.target.pool === 'h100-east');
    expect(scaleUp).toBeDefined();

    const preview = async (policies: unknown[]) =>
      g!.request<{ recommendations: PreviewEntry[] }>('POST', '/api/policies/preview', { policies });

    const step = await preview([
      { name: 'h100-scale', match: { kind: ['scale'], target: 'pool=h100-*' }, autoApply: true, maxStep: 1 },
    ]);
    expect(step.status).toBe(200);
    expect(step.body.recommendations.map((r) => r.recommendationId).sort()).toEqual(
      open.map((r) => r.id).sort(),
    );
    const entry = step.body.recommendations.find((r) => r.recommendationId === scaleUp!.id)!;
    expect(entry).toMatchObject({ policy: 'h100-scale', decision: 'auto_apply', action: { from: 2, to: 3 } });
    expect(entry.note).toMatch(/max_step 1/);
    for (const other of step.body.recommendations.filter((r) => r.target.pool !== 'h100-east')) {
      expect(other).toMatchObject({ policy: null, decision: 'propose' });
    }

    const careful = await preview([
      { name: 'careful', match: { kind: ['scale'] }, autoApply: true, minConfidence: 1 },
    ]);
    expect(careful.body.recommendations.find((r) => r.recommendationId === scaleUp!.id)).toMatchObject({
      policy: 'careful',
      decision: 'propose',
    });
    const dry = await preview([{ name: 'dry', autoApply: true, dryRun: true }]);
    expect(dry.body.recommendations.every((r) => r.decision === 'dry_run')).toBe(true);

    const invalid = await g.request<{ error: { code: string; message: string } }>(
      'POST',
      '/api/policies/preview',
      { policies: [{ name: 'x', minConfidence: 2 }] },
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('GOV_ERR_POLICY_INVALID');
    expect(invalid.body.error.message).toMatch(/^policies\.0\.minConfidence: /);

    // Previewing set nothing: the config's (empty) policies are still in force.
    const policies = await g.request<{ source: string; policies: unknown[] }>('GET', '/api/policies');
    expect(policies.body).toMatchObject({ source: 'config', policies: [] });
  }, 120_000);
});
