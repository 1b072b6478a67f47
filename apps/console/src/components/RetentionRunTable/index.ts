export { RetentionRunTable } from './RetentionRunTable.tsx';
