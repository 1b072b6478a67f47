/** Minimal `--flag value` / `--flag=value` / `--switch` parser; positional arguments are kept in order. */
export interface ParsedArgs {
  positional: string[];
  flags: Record<string, string | true>;
}

export function parseArgs(argv: readonly string[], switches: readonly string[] = []): ParsedArgs {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (eq !== -1) flags[name] = arg.slice(eq + 1);
    else if (switches.includes(name) || i + 1 >= argv.length || argv[i + 1]!.startsWith('--'))
      flags[name] = true;
    else flags[name] = argv[++i]!;
  }
  return { positional, flags };
}

/** A command line that cannot be run as given: one line on stderr and exit code 2, no stack trace. */
export class UsageError extends Error {}

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
