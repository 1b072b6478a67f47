export { DeliveryTable } from './DeliveryTable.tsx';
