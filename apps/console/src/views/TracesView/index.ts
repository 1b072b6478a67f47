export { TracesView } from './TracesView.tsx';
