export { AlertsView } from './AlertsView.tsx';
