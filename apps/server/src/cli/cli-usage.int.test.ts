import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT } from '../bench/spawn-governor-process.ts';

// A benchmark runs for minutes and loads the machine: asking for its usage must never start it.

const run = promisify(execFile);

describe('governor bench <name> --help', () => {
  it.each(['ingest', 'signals', 'soak', 'control'])('prints the usage of %s and exits 0', async (name) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CLI_PATH, 'bench', name, '--help'], {
      cwd: REPO_ROOT,
      timeout: 30_000,
    });
    expect(stdout).toMatch(new RegExp(`^usage: governor bench ${name} `));
  });
});

describe('a flag that expects a number', () => {
  it('gets a one-line usage error and exit code 2, not a stack trace', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', CLI_PATH, 'start', '--http-port', 'abc'], {
      cwd: REPO_ROOT,
      timeout: 30_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in failed && failed.code).toBe(2);
    expect((failed as { stderr: string }).stderr).toBe(
      'governor: --http-port expects a number, got "abc" (see governor --help)\n',
    );
  });
});

describe('an option the command does not know', () => {
  it('is refused with one line naming it and its --help, exit code 2, before anything starts', async () => {
    const failed = await run(
      process.execPath,
      ['--import', 'tsx', CLI_PATH, 'start', '--http-prot', '9000'],
      {
        cwd: REPO_ROOT,
        timeout: 30_000,
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect('code' in failed && failed.code).toBe(2);
    expect((failed as { stderr: string }).stderr).toBe(
      'governor: unknown option --http-prot for "governor start" (see governor start --help)\n',
    );
  });

  it('leaves --help working on each command', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CLI_PATH, 'config', '--help'], {
      cwd: REPO_ROOT,
      timeout: 30_000,
    });
    expect(stdout).toMatch(/^usage:\n {2}governor config check FILE/);
  });
});
