export { FleetView } from './FleetView.tsx';
