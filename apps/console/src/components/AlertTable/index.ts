export { AlertTable } from './AlertTable.tsx';
