export { SqlEditor } from './SqlEditor.tsx';
export type { SqlEditorHandle, SqlEditorProps } from './SqlEditor.tsx';
