export { AsyncContent, EmptyState, ErrorState, LoadingState } from './StateView.tsx';
