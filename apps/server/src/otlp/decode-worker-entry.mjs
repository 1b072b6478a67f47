// Worker entry in plain JavaScript: Node 20 loads a worker's entry before an --import loader
// (tsx) is ready, so the worker registers tsx itself, then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./decode-worker.ts');
