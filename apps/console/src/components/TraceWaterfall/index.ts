export { TraceWaterfall } from './TraceWaterfall.tsx';
