import { describe, expect, it } from 'vitest';
import { COMMAND_OPTIONS } from './command-options.ts';
import { UsageError, parseArgs } from './parse-args.ts';

function usageError(argv: string[]): UsageError {
  try {
    parseArgs(argv, COMMAND_OPTIONS.start, 'governor start');
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`expected ${argv.join(' ')} to be refused`);
}

describe('parseArgs', () => {
  it('reads values, --flag=value, switches and positionals', () => {
    expect(
      parseArgs(['check', 'governor.yaml', '--name=ci', '--scopes', 'read+operate'], COMMAND_OPTIONS.config),
    ).toEqual({ positional: ['check', 'governor.yaml'], flags: { name: 'ci', scopes: 'read+operate' } });
    expect(parseArgs(['--demo', '--http-port', '0'], COMMAND_OPTIONS.start).flags).toEqual({
      demo: true,
      'http-port': '0',
    });
  });

  it('refuses an option the command does not know, naming it and where help is', () => {
    const error = usageError(['--http-prot', '9000']);
    expect(error.message).toBe('unknown option --http-prot for "governor start"');
    expect(error.help).toBe('governor start --help');
  });

  it('refuses a missing value and a value given to a switch', () => {
    expect(usageError(['--config']).message).toMatch(/^--config needs a value/);
    expect(usageError(['--config', '--demo']).message).toMatch(/^--config needs a value/);
    expect(usageError(['--demo=yes']).message).toBe('--demo takes no value (for "governor start")');
  });

  it('accepts --help and -h on every command', () => {
    expect(parseArgs(['-h'], COMMAND_OPTIONS.query).flags).toEqual({ help: true });
    expect(parseArgs(['--help'], COMMAND_OPTIONS.control).flags).toEqual({ help: true });
  });
});
