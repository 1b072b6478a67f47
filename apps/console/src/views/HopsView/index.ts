export { HopsView } from './HopsView.tsx';
