export { BreakableName } from './BreakableName.tsx';
