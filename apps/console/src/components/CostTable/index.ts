export { CostTable } from './CostTable.tsx';
