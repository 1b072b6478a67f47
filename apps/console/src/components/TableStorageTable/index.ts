export { TableStorageTable } from './TableStorageTable.tsx';
