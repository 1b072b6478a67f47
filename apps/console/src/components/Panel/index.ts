export { Panel } from './Panel.tsx';
