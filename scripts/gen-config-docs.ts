// Writes docs/config.md from the zod config schema (GovernorConfig): `pnpm docs:config`.
// apps/server/src/cli/config-reference.test.ts fails while the page and the schema disagree.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderConfigMarkdown } from '../apps/server/src/cli/config-reference.ts';

const target = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'config.md');
writeFileSync(target, renderConfigMarkdown());
console.log(`wrote ${target}`);
