export { TimeSeriesChart } from './TimeSeriesChart.tsx';
export type { TimeSeriesChartProps } from './TimeSeriesChart.tsx';
export { pickColor, SERIES_COLORS } from './chart-colors.ts';
