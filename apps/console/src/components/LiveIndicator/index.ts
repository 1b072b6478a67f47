export { LiveIndicator } from './LiveIndicator.tsx';
