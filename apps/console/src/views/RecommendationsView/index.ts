export { RecommendationsView } from './RecommendationsView.tsx';
