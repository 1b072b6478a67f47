import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { GovernorError } from '../errors.ts';

// Serves the console's production build at `/` with an SPA fallback: a GET for a path that is
// not a file in dist answers index.html so client routes and shared URLs load. Registered last,
// so every API route wins over the catch-all. The folder is checked per request, so a rebuild
// is picked up without a restart and a missing build answers a message instead of a 404.

/** apps/server/src/api → ../../../console/dist */
export const DEFAULT_CONSOLE_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../../console/dist');

/** Paths the console never answers for: a miss there is an API 404, not index.html. */
const API_PREFIXES = ['/api/', '/v1/', '/metrics'];

export interface ConsoleOptions {
  /** Folder with index.html and assets/; default: apps/console/dist. */
  distDir?: string;
  /**
   * Settings the console needs before its first API call (the SLO for chart lines), written into
   * index.html as `<script type="application/json" id="governor-bootstrap">`.
   */
  bootstrap?: ConsoleBootstrap;
}

export interface ConsoleBootstrap {
  slo: { ttftMs: number | null; e2eMs: number | null };
}

export async function consolePlugin(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const root = resolve(options.distDir ?? DEFAULT_CONSOLE_DIST);
  // serve: false — only reply.sendFile; the route below decides what to send.
  await app.register(fastifyStatic, { root, serve: false });

  // Hidden from the API reference: the console's pages, not an API.
  app.get('/*', { schema: { hide: true, summary: 'The console (SPA fallback)' } }, async (request, reply) => {
    const path = decodePath(request.url);
    if (API_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix))) {
      throw new GovernorError('GOV_ERR_NOT_FOUND', `no route for ${request.method} ${path}`);
    }
    if (!(await isFile(resolve(root, 'index.html')))) return sendBuildMissing(reply, root);

    const relative = path.replace(/^\/+/, '');
    const candidate = resolve(root, relative);
    const insideRoot = candidate === root || candidate.startsWith(root + sep);
    if (relative !== '' && insideRoot && (await isFile(candidate))) {
      const immutable = relative.startsWith('assets/');
      reply.header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      return reply.sendFile(relative, root, { cacheControl: false });
    }
    // A missing asset is a 404, not the HTML shell (a stale tab asking for an old hashed file).
    if (relative.startsWith('assets/')) {
      throw new GovernorError('GOV_ERR_NOT_FOUND', `no console asset ${path}; reload the page`);
    }
    const html = await readFile(resolve(root, 'index.html'), 'utf8');
    return reply
      .header('Cache-Control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(injectBootstrap(html, options.bootstrap ?? null));
  });
}

/** Adds the bootstrap JSON before </head>; `<` is escaped so the JSON cannot end the script. */
export function injectBootstrap(html: string, bootstrap: ConsoleBootstrap | null): string {
  if (!bootstrap) return html;
  const json = JSON.stringify(bootstrap).replace(/</g, '\\u003c');
  const tag = `<script type="application/json" id="governor-bootstrap">${json}</script>`;
  return html.includes('</head>') ? html.replace('</head>', `${tag}</head>`) : tag + html;
}

function decodePath(url: string): string {
  const raw = url.split('?')[0] ?? '/';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function sendBuildMissing(reply: FastifyReply, root: string): FastifyReply {
  const command = 'pnpm --filter @governor/console build';
  return reply
    .code(503)
    .header('Cache-Control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><title>Governor console not built</title></head>` +
        `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;line-height:1.5">` +
        `<h1>The Governor console has not been built</h1>` +
        `<p>Governor serves the console's production build from <code>${escapeHtml(root)}</code>, which has no index.html yet.</p>` +
        `<p>Build it from the repository root, then reload this page:</p>` +
        `<pre style="background:#f4f4f5;padding:.75rem">${command}</pre>` +
        `<p>For development, run <code>pnpm --filter @governor/console dev</code> instead.</p>` +
        `<p>The API is up: <a href="/api/health">/api/health</a>.</p></body></html>`,
    );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}
