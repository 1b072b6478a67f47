export { RetentionTargetTable } from './RetentionTargetTable.tsx';
