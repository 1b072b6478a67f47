export { RecommendationCard } from './RecommendationCard.tsx';
export type { RecommendationCardProps } from './RecommendationCard.tsx';
