// What other packages' tests import as @governor/control/testing.
export * from '../src/actuators/kubernetes/fake-kubernetes-api.ts';
export * from './records.ts';
