export { TasksView } from './TasksView.tsx';
