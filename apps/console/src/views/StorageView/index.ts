export { StorageView } from './StorageView.tsx';
