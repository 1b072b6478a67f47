export { PoolFilter } from './PoolFilter.tsx';
