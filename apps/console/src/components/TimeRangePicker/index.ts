export { TimeRangePicker } from './TimeRangePicker.tsx';
