#!/usr/bin/env node
// Fails when a workspace package imports against the dependency direction drawn in ARCHITECTURE.md:
// conventions ← otlp ← store ← signals ← control, alerts ← apps/server; the simulator and the
// console depend on conventions only; delivery (outbound HTTP: result, retries, signatures)
// depends on nothing and is shared by control and alerts. Checks both package.json dependencies and import statements.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const ALLOWED = {
  '@governor/conventions': [],
  '@governor/delivery': [],
  '@governor/otlp': ['@governor/conventions'],
  '@governor/store': ['@governor/conventions', '@governor/otlp'],
  '@governor/signals': ['@governor/conventions', '@governor/otlp', '@governor/store'],
  '@governor/control': [
    '@governor/conventions',
    '@governor/otlp',
    '@governor/store',
    '@governor/signals',
    '@governor/delivery',
  ],
  '@governor/alerts': [
    '@governor/conventions',
    '@governor/otlp',
    '@governor/store',
    '@governor/signals',
    '@governor/delivery',
  ],
  '@governor/server': [
    '@governor/conventions',
    '@governor/otlp',
    '@governor/store',
    '@governor/signals',
    '@governor/control',
    '@governor/alerts',
    '@governor/delivery',
    '@governor/simulator',
  ],
  '@governor/simulator': ['@governor/conventions'],
  '@governor/console': ['@governor/conventions'],
};
const DIRS = ['packages', 'apps'];
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) out.push(full);
  }
  return out;
}

for (const group of DIRS) {
  for (const pkgDir of readdirSync(join(root, group))) {
    const dir = join(root, group, pkgDir);
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const allowed = ALLOWED[pkg.name];
    if (!allowed) {
      problems.push(
        `${pkg.name}: not in the dependency graph of scripts/check-deps.mjs; add it there and to ARCHITECTURE.md`,
      );
      continue;
    }
    const declared = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) =>
      d.startsWith('@governor/'),
    );
    for (const dep of declared) {
      if (!allowed.includes(dep))
        problems.push(`${pkg.name} depends on ${dep}, against the dependency direction`);
    }
    for (const file of walk(dir)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)['"](@governor\/[\w-]+)/g)) {
        const dep = m[1];
        if (dep !== pkg.name && !allowed.includes(dep)) {
          problems.push(
            `${relative(root, file)} imports ${dep}, against the dependency direction of ${pkg.name}`,
          );
        }
      }
      for (const m of text.matchAll(/from\s+['"](\.\.\/)+(packages|apps)\//g)) {
        problems.push(
          `${relative(root, file)} reaches into another package by relative path (${m[0]}); import it by name`,
        );
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`dependency direction check failed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('dependency direction check passed');
