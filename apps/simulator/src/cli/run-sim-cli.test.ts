import { describe, expect, it } from 'vitest';
import { parseSimArgs, runSimCli } from './run-sim-cli.ts';

describe('governor sim arguments', () => {
  it.each([
    [
      ['--bogus', '1'],
      ['Unknown option', '--workload', '--scenario'],
    ],
    [
      ['--workload', 'nope'],
      ['unknown workload "nope"', 'azure-conv', 'synthetic-mix'],
    ],
    [
      ['--scenario', 'meteor'],
      ['unknown scenario "meteor"', 'region-outage', 'agentic-surge'],
    ],
    [
      ['--policy', 'magic'],
      ['unknown policy "magic"', 'static-peak', 'wva'],
    ],
    [
      ['--protocol', 'grpc'],
      ['http/json', 'http/protobuf'],
    ],
    [
      ['--duration', 'soon'],
      ['--duration', 'invalid duration'],
    ],
    [['--speed', '-2'], ['--speed']],
    [
      ['--target', 'localhost:4318'],
      ['--target', 'http://127.0.0.1:4318'],
    ],
    [
      ['--start', 'yesterday'],
      ['--start', 'RFC 3339'],
    ],
  ])('rejects %j and names what is valid', (args, expected) => {
    let message = '';
    try {
      parseSimArgs(args);
    } catch (error) {
      message = (error as Error).message;
    }
    for (const text of expected) expect(message).toContain(text);
  });

  it('returns exit code 2 for bad usage and 0 for --help', async () => {
    const writes: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => writes.push(chunk) > 0) as typeof process.stderr.write;
    try {
      expect(await runSimCli(['sim', '--workload', 'nope'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(writes.join('')).toContain('Run "governor sim --help" for usage.');
  });

  it('emits real shapes by default and the governor.* shapes with --governor-attributes', () => {
    expect(parseSimArgs(['sim']).options.governorAttributes).toBeUndefined();
    expect(parseSimArgs(['sim', '--governor-attributes']).options.governorAttributes).toBe(true);
  });

  it('parses a full command line into run options', () => {
    const parsed = parseSimArgs([
      'sim',
      '--workload',
      'synthetic-mix',
      '--scenario',
      'region-outage',
      '--duration',
      '1h30m',
      '--speed',
      '10',
      '--seed',
      '7',
      '--target',
      'http://127.0.0.1:4318',
      '--policy',
      'keda',
      '--lockstep',
      'http://127.0.0.1:4318',
      '--control-interval',
      '15s',
      '--rate-multiplier',
      '1.5',
      '--protocol',
      'http/protobuf',
      '--actuator-port',
      '0',
      '--start',
      '2024-03-01T00:00:00Z',
      '--shape',
      'burst',
    ]);
    expect(parsed.options).toMatchObject({
      workload: 'synthetic-mix',
      scenario: 'region-outage',
      durationMs: 5_400_000,
      speed: 10,
      seed: 7,
      target: 'http://127.0.0.1:4318',
      policy: 'keda',
      lockstep: 'http://127.0.0.1:4318',
      controlIntervalMs: 15_000,
      rateMultiplier: 1.5,
      protocol: 'http/protobuf',
      actuatorPort: 0,
      startEpochMs: Date.UTC(2024, 2, 1),
      shape: 'burst',
    });
  });
});
