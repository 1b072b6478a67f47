export { SqlView } from './SqlView.tsx';
