export { SignalSeriesPanel } from './SignalSeriesPanel.tsx';
export type { SignalSeriesPanelProps } from './SignalSeriesPanel.tsx';
