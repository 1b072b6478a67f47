export { DashboardsView } from './DashboardsView.tsx';
