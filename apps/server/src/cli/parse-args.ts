import { parseArgs as parseNodeArgs } from 'node:util';

/** The options one command accepts: `strings` take a value (`--flag v` or `--flag=v`), `switches` do not. */
export interface CommandOptions {
  strings?: readonly string[];
  switches?: readonly string[];
}

/** Parsed command line: positional arguments in order, flags by long name. */
export interface ParsedArgs {
  positional: string[];
  flags: Record<string, string | true>;
}

/** A command line that cannot be run as given: one line on stderr and exit code 2, no stack trace. */
export class UsageError extends Error {
  /** Where the user finds the right usage, e.g. `governor start --help`. */
  readonly help: string;
  constructor(message: string, help = 'governor --help') {
    super(message);
    this.help = help;
  }
}

/**
 * Strict parsing with `node:util` (as `governor sim` does): an option the command does not know, a
 * value given to a switch or a missing value is a UsageError naming the flag, never silently ignored.
 * Every command accepts `--help`/`-h`.
 */
export function parseArgs(
  argv: readonly string[],
  options: CommandOptions,
  command = 'governor',
): ParsedArgs {
  const spec: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const name of options.strings ?? []) spec[name] = { type: 'string' };
  for (const name of options.switches ?? []) spec[name] = { type: 'boolean' };
  let parsed: ReturnType<typeof parseNodeArgs>;
  try {
    parsed = parseNodeArgs({ args: [...argv], options: spec, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(describeParseError(error as NodeJS.ErrnoException, command), `${command} --help`);
  }
  const flags: Record<string, string | true> = {};
  for (const [name, value] of Object.entries(parsed.values)) {
    if (typeof value === 'string') flags[name] = value;
    else if (value === true) flags[name] = true;
  }
  return { positional: parsed.positionals, flags };
}

/** node:util's messages are several sentences; the CLI says in one line which flag and what is wrong. */
function describeParseError(error: NodeJS.ErrnoException, command: string): string {
  const flag = /'(?:-\w, )?(--?[\w-]+)/.exec(error.message)?.[1] ?? '';
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${flag} for "${command}"`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(error.message)
        ? `${flag} takes no value (for "${command}")`
        : `${flag} needs a value (for "${command}"; use ${flag}=VALUE for a value starting with -)`;
    default:
      return `${error.message.split('\n')[0]} (for "${command}")`;
  }
}

export function flagString(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}

export function flagNumber(args: ParsedArgs, name: string): number | undefined {
  const v = flagString(args, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} expects a number, got "${v}"`);
  return n;
}
