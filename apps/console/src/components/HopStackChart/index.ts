export { HopStackChart } from './HopStackChart.tsx';
export type { HopStackRow } from './HopStackChart.tsx';
