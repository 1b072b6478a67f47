export { SchemaBrowser } from './SchemaBrowser.tsx';
