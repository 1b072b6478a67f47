#!/usr/bin/env node
// Installs the real peers the test suite drives — Chromium (console end-to-end tests), Prometheus
// and Alertmanager, ClickHouse and PostgreSQL (the scale-out engines) — and jemalloc, which Governor runs on when installed (scripts/run-governor.sh),
// from Debian's packages when they are missing. Runs before `pnpm test`.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const NEEDED = [
  { bins: ['/usr/bin/chromium'], pkg: 'chromium' },
  { bins: ['/usr/bin/prometheus'], pkg: 'prometheus' },
  { bins: ['/usr/bin/prometheus-alertmanager'], pkg: 'prometheus-alertmanager' },
  { bins: ['/usr/sbin/clickhouse-server'], pkg: 'clickhouse-server' },
  { bins: ['/usr/lib/postgresql/15/bin/postgres'], pkg: 'postgresql-15' },
  {
    bins: ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'],
    pkg: 'libjemalloc2',
  },
];
const missing = NEEDED.filter((n) => !n.bins.some((bin) => existsSync(bin)));
if (missing.length === 0) process.exit(0);
const names = missing.map((m) => m.pkg).join(' ');
if (process.getuid?.() !== 0) {
  console.error(`missing system packages: ${names}. Install them with: sudo apt-get install -y ${names}`);
  process.exit(1);
}
console.log(`installing system packages for the test suite: ${names} (apt-get, one time)`);
try {
  execSync('apt-get update -qq', { stdio: 'inherit' });
  execSync(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${names}`, {
    stdio: 'inherit',
  });
} catch {
  console.error(`could not install ${names}; install them with apt-get and run the tests again`);
  process.exit(1);
}
