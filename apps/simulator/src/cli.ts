#!/usr/bin/env node
// `tsx apps/simulator/src/cli.ts sim …` — the simulator on its own; `governor sim` dispatches to runSimCli.
import { runSimCli } from './cli/run-sim-cli.ts';

process.exitCode = await runSimCli(process.argv.slice(2));
