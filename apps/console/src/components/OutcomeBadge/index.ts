export { OutcomeBadge } from './OutcomeBadge.tsx';
