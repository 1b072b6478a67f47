import {
  type AlertEngine,
  type AlertEngineEvent,
  controlActionToAlertEvent,
  recommendationToAlertEvent,
  toAlertView,
  toDeliveryView,
  toReceiverView,
} from '@governor/alerts';
import type {
  AlertsResponse,
  ControlAction,
  Recommendation,
  ReceiverTestResponse,
} from '@governor/conventions';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GovernorError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';

export interface AlertsPluginOptions {
  engine: AlertEngine;
  /** When given: alert transitions and finished deliveries are published here, and recommendation and action events feed event rules. */
  events?: EventBus;
}

const Limit = z.coerce.number().int().min(1).max(1000);

const AlertsQuery = z.object({
  state: z.enum(['active', 'pending', 'firing', 'resolved']).optional(),
  rule: z.string().min(1).optional(),
  fingerprint: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
  limit: Limit.default(100),
});

const DeliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'dead']).optional(),
  receiver: z.string().min(1).optional(),
  limit: Limit.default(100),
});

function parse<T>(schema: z.ZodType<T>, value: unknown, hint: string): T {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw new GovernorError(
      'GOV_ERR_REQUEST_INVALID',
      `${where}${issue?.message ?? 'invalid request'}; ${hint}`,
    );
  }
  return result.data;
}

function fingerprintParam(params: unknown): string {
  const { fingerprint } = params as { fingerprint: string };
  if (!/^[0-9a-f]{16}$/.test(fingerprint)) {
    throw new GovernorError(
      'GOV_ERR_REQUEST_INVALID',
      `"${fingerprint.slice(0, 40)}" is not an alert fingerprint (16 hex digits, as in GET /api/alerts)`,
    );
  }
  return fingerprint;
}

/** Alert history, delivery log, dead letters and receiver test-fire (packages/alerts/README.md). */
export async function alertsPlugin(app: FastifyInstance, options: AlertsPluginOptions): Promise<void> {
  const { engine, events } = options;

  if (events) bridgeEvents(app, engine, events);

  app.get('/api/alerts', async (request): Promise<AlertsResponse> => {
    const q = parse(AlertsQuery, request.query, 'e.g. /api/alerts?state=firing&rule=ttft-slo&limit=100');
    const evaluated = engine.evaluatedUntilNs();
    const active = engine
      .activeAlerts()
      .filter(
        (a) =>
          (q.state === undefined || q.state === 'active' || q.state === a.state) &&
          (q.rule === undefined || a.rule === q.rule) &&
          (q.fingerprint === undefined || a.fingerprint === q.fingerprint),
      );
    const wantsHistory = q.state === undefined || q.state === 'resolved';
    const history = wantsHistory
      ? await engine.history({ rule: q.rule, fingerprint: q.fingerprint, limit: q.limit })
      : [];
    return {
      evaluatedAt: evaluated === null ? null : new Date(Number(evaluated / 1_000_000n)).toISOString(),
      active: q.state === 'resolved' ? [] : active.map(toAlertView),
      history: history.map(toAlertView),
    };
  });

  app.get('/api/alerts/rules', async () => ({ rules: engine.rules }));

  app.get('/api/alerts/deliveries', async (request) => {
    const q = parse(
      DeliveriesQuery,
      request.query,
      'e.g. /api/alerts/deliveries?status=pending&receiver=ops',
    );
    const records = await engine.deliveries(q);
    return { deliveries: records.map((r) => toDeliveryView(r)) };
  });

  app.get('/api/alerts/dead-letters', async (request) => {
    const q = parse(
      DeliveriesQuery.omit({ status: true }),
      request.query,
      'e.g. /api/alerts/dead-letters?receiver=ops',
    );
    const dead = await engine.deadLetters(q);
    return {
      deadLetters: dead.map((d) =>
        toDeliveryView(d.record, { attempts: d.attempts, includeNotification: true }),
      ),
    };
  });

  app.get('/api/alerts/:fingerprint/deliveries', async (request) => {
    const fingerprint = fingerprintParam(request.params);
    const { limit } = parse(z.object({ limit: Limit.default(100) }), request.query, 'e.g. ?limit=50');
    const deliveries = await engine.deliveriesForAlert(fingerprint, limit);
    return {
      fingerprint,
      deliveries: deliveries.map((d) => toDeliveryView(d.record, { attempts: d.attempts })),
    };
  });

  app.get('/api/receivers', async () => ({ receivers: [...engine.receivers.values()].map(toReceiverView) }));

  app.post('/api/receivers/:name/test', async (request): Promise<ReceiverTestResponse> => {
    const { name } = request.params as { name: string };
    let outcome: Awaited<ReturnType<AlertEngine['testReceiver']>>;
    try {
      outcome = await engine.testReceiver(name);
    } catch (error) {
      throw new GovernorError('GOV_ERR_ALERTS_STOPPING', (error as Error).message, 5, { cause: error });
    }
    if (!outcome) {
      const known = [...engine.receivers.keys()].join(', ') || 'none';
      throw new GovernorError(
        'GOV_ERR_ALERTS_UNKNOWN_RECEIVER',
        `no receiver named "${name}" (configured: ${known}); receivers are defined under receivers: in the config`,
      );
    }
    const { record, result } = outcome;
    return {
      receiver: name,
      deliveryId: record.id,
      outcome: result.outcome,
      httpStatus: result.httpStatus,
      error: result.outcome === 'ok' ? null : result.error,
    };
  });
}

/** Alert changes out to GET /api/events; recommendation and action events in to event rules. */
function bridgeEvents(app: FastifyInstance, engine: AlertEngine, events: EventBus): void {
  const stopPublishing = engine.subscribe((event: AlertEngineEvent) => {
    if (event.type === 'alert.delivery') {
      // Finished deliveries only; a retry in progress is not news.
      if (event.delivery.status === 'pending') return;
      events.publish({ type: 'alert.delivery', data: toDeliveryView(event.delivery) });
      return;
    }
    events.publish({ type: event.type, data: toAlertView(event.alert) });
  });
  const stopConsuming = events.subscribe((event) => {
    let source: ReturnType<typeof recommendationToAlertEvent> | null = null;
    try {
      if (event.type === 'recommendation.created' || event.type === 'recommendation.updated') {
        source = recommendationToAlertEvent(event.data as Recommendation);
      } else if (event.type === 'control.action') {
        source = controlActionToAlertEvent(event.data as ControlAction);
      }
    } catch (error) {
      app.log.warn({ err: error, type: event.type }, 'event not usable by alert rules');
      return;
    }
    // Never awaited: the publisher (the control loop) must not wait for alerting.
    if (source) {
      engine.recordEvent(source).catch((error) => app.log.error({ err: error }, 'alert event rule failed'));
    }
  });
  app.addHook('onClose', async () => {
    stopPublishing();
    stopConsuming();
  });
}
