export { PoliciesView } from './PoliciesView.tsx';
