export { StatTiles } from './StatTiles.tsx';
export type { StatTile } from './StatTiles.tsx';
