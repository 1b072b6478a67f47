export { FleetTable } from './FleetTable.tsx';
export type { FleetTableProps } from './FleetTable.tsx';
