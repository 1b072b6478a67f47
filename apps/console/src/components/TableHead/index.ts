export { TableHead } from './TableHead.tsx';
export type { TableColumn } from './TableHead.tsx';
