export { ResultChart } from './ResultChart.tsx';
export type { ResultChartProps } from './ResultChart.tsx';
