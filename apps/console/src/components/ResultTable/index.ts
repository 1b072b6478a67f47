export { ResultTable } from './ResultTable.tsx';
