export { AuthBanner } from './AuthBanner.tsx';
