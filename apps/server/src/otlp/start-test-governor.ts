import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GovernorConfig } from '@governor/conventions';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

// For the ingest integration tests: a real Governor in this process, on ephemeral ports, in a
// fresh temp dir, auth off (loopback, no tokens); `sql` asks POST /api/sql like a user would.

export interface TestGovernor {
  governor: RunningGovernor;
  url: string;
  dataDir: string;
  /** POST /api/sql; throws unless 200. Rows come back as arrays in column order. */
  sql(sql: string, limit?: number): Promise<unknown[][]>;
  /** POST /api/sql, first column of the first row as a number (for counts). */
  count(sql: string): Promise<number>;
  close(): Promise<void>;
}

export async function startTestGovernor(config: Record<string, unknown> = {}): Promise<TestGovernor> {
  const dataDir = mkdtempSync(join(tmpdir(), 'governor-ingest-'));
  const server = (config.server as Record<string, unknown> | undefined) ?? {};
  const governor = await startGovernor({
    config: GovernorConfig.parse({
      ...config,
      server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: dataDir, ...server },
    }),
    env: {},
  });
  const sql = async (text: string, limit?: number) => {
    const response = await fetch(`${governor.httpUrl}/api/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(limit === undefined ? { sql: text } : { sql: text, limit }),
    });
    const body = (await response.json()) as { rows?: unknown[][]; error?: { message: string } };
    if (response.status !== 200 || !body.rows) {
      throw new Error(
        `POST /api/sql answered ${response.status}: ${body.error?.message ?? JSON.stringify(body)}`,
      );
    }
    return body.rows;
  };
  return {
    governor,
    url: governor.httpUrl,
    dataDir,
    sql,
    count: async (text) => Number((await sql(text))[0]?.[0] ?? Number.NaN),
    async close() {
      await governor.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
