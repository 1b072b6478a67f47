export { DashboardPanel } from './DashboardPanel.tsx';
