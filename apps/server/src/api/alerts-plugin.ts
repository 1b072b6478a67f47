import {
  attemptOutcome,
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
import { AnyObject, ERROR_RESPONSES, openObject } from './http-schemas.ts';
import { withHint, useZodSchemas } from './zod-validation.ts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { EventBus } from '../events/event-bus.ts';

export interface AlertsPluginOptions {
  engine: AlertEngine;
  /** When given: alert transitions and finished deliveries are published here, and recommendation and action events feed event rules. */
  events?: EventBus;
}

const Limit = z.coerce.number().int().min(1).max(1000);

const AlertsQuery = withHint(
  z.object({
    state: z.enum(['active', 'pending', 'firing', 'resolved']).optional(),
    rule: z.string().min(1).optional(),
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{16}$/)
      .optional(),
    limit: Limit.default(100),
  }),
  'e.g. /api/alerts?state=firing&rule=ttft-slo&limit=100',
);

const DeliveriesFields = {
  status: z.enum(['pending', 'delivered', 'dead']).optional(),
  receiver: z.string().min(1).optional(),
  limit: Limit.default(100),
};
const DeliveriesQuery = withHint(
  z.object(DeliveriesFields),
  'e.g. /api/alerts/deliveries?status=pending&receiver=ops',
);
const DeadLettersQuery = withHint(
  z.object({ receiver: DeliveriesFields.receiver, limit: DeliveriesFields.limit }),
  'e.g. /api/alerts/dead-letters?receiver=ops',
);

const Fingerprint = z
  .string()
  .regex(/^[0-9a-f]{16}$/, 'not an alert fingerprint (16 hex digits, as in GET /api/alerts)')
  .describe('16 hex digits, as in GET /api/alerts');

const AlertView = openObject({
  id: z.string(),
  fingerprint: z.string(),
  rule: z.string(),
  ruleType: z.enum(['threshold', 'slo_burn_rate', 'event']),
  state: z.enum(['pending', 'firing', 'resolved']),
  severity: z.string().nullable(),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  value: z.number().nullable(),
  receivers: z.array(z.string()),
  activeAt: z.string(),
  startsAt: z.string().nullable(),
  endsAt: z.string().nullable(),
  lastSeenAt: z.string(),
}).meta({ id: 'Alert' });

const DeliveryView = openObject({
  id: z.string(),
  kind: z.enum(['notification', 'test']),
  receiver: z.string(),
  status: z.enum(['pending', 'delivered', 'dead']),
  attempts: z.number(),
  createdAt: z.string(),
  lastHttpStatus: z.number().nullable(),
  lastError: z.string().nullable(),
}).meta({ id: 'Delivery' });

/** Alert history, delivery log, dead letters and receiver test-fire (packages/alerts/README.md). */
export async function alertsPlugin(app: FastifyInstance, options: AlertsPluginOptions): Promise<void> {
  useZodSchemas(app);
  const { engine, events } = options;

  if (events) bridgeEvents(app, engine, events);

  const api = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['alerts'];

  api.get(
    '/api/alerts',
    {
      schema: {
        summary: 'Active alerts and alert history',
        tags,
        querystring: AlertsQuery,
        response: {
          200: z.object({
            evaluatedAt: z
              .string()
              .nullable()
              .describe('Last evaluated event time; null before the first evaluation'),
            active: z.array(AlertView),
            history: z.array(AlertView),
          }),
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request): Promise<AlertsResponse> => {
      const q = request.query;
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
    },
  );

  api.get(
    '/api/alerts/rules',
    {
      schema: {
        summary: 'Alert rules from the config',
        tags,
        response: { 200: z.object({ rules: z.array(AnyObject) }), ...ERROR_RESPONSES },
      },
    },
    async () => ({ rules: [...engine.rules] }),
  );

  api.get(
    '/api/alerts/deliveries',
    {
      schema: {
        summary: 'Notification deliveries, newest first',
        tags,
        querystring: DeliveriesQuery,
        response: { 200: z.object({ deliveries: z.array(DeliveryView) }), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const records = await engine.deliveries(request.query);
      return { deliveries: records.map((r) => toDeliveryView(r)) };
    },
  );

  api.get(
    '/api/alerts/dead-letters',
    {
      schema: {
        summary: 'Deliveries that gave up, with their attempts and notification',
        tags,
        querystring: DeadLettersQuery,
        response: { 200: z.object({ deadLetters: z.array(DeliveryView) }), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const dead = await engine.deadLetters(request.query);
      return {
        deadLetters: dead.map((d) =>
          toDeliveryView(d.record, { attempts: d.attempts, includeNotification: true }),
        ),
      };
    },
  );

  api.get(
    '/api/alerts/:fingerprint/deliveries',
    {
      schema: {
        summary: "One alert's deliveries with every attempt",
        tags,
        params: z.object({ fingerprint: Fingerprint }),
        querystring: withHint(z.object({ limit: Limit.default(100) }), 'e.g. ?limit=50'),
        response: {
          200: z.object({ fingerprint: z.string(), deliveries: z.array(DeliveryView) }),
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request) => {
      const { fingerprint } = request.params;
      const deliveries = await engine.deliveriesForAlert(fingerprint, request.query.limit);
      return {
        fingerprint,
        deliveries: deliveries.map((d) => toDeliveryView(d.record, { attempts: d.attempts })),
      };
    },
  );

  api.get(
    '/api/receivers',
    {
      schema: {
        summary: 'Alert receivers from the config (URLs reduced to their origin)',
        tags,
        response: { 200: z.object({ receivers: z.array(AnyObject) }), ...ERROR_RESPONSES },
      },
    },
    async () => ({ receivers: [...engine.receivers.values()].map(toReceiverView) }),
  );

  api.post(
    '/api/receivers/:name/test',
    {
      schema: {
        summary: 'Send a test notification to a receiver now',
        tags,
        params: z.object({ name: z.string().describe('Receiver name from the config') }),
        response: {
          200: z.object({
            receiver: z.string(),
            deliveryId: z.string(),
            outcome: z.enum(['ok', 'failed', 'retryable']),
            httpStatus: z.number().nullable(),
            error: z.string().nullable(),
          }),
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request): Promise<ReceiverTestResponse> => {
      const { name } = request.params;
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
        outcome: attemptOutcome(result),
        httpStatus: result.httpStatus,
        error: result.status === 'delivered' ? null : result.error,
      };
    },
  );
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
