// Where replicas run: GPU nodes of one GPU type in one region, 8 GPUs each, filled first-fit as the
// Kubernetes scheduler would bin-pack `nvidia.com/gpu` requests. Nodes stay once created (node
// autoscaling is not simulated), so a node's DCGM exporter keeps reporting its idle GPUs.

import type { Replica } from './replica-engine.ts';

export const GPUS_PER_NODE = 8;

export interface GpuNode {
  /** Index among all nodes, in creation order. */
  index: number;
  gpuType: string;
  region: string;
  /** The replica holding each GPU, or null. */
  slots: Array<Replica | null>;
}

export interface NodePlacement {
  readonly nodes: readonly GpuNode[];
  /** Places a replica on free GPUs; returns the node, and whether the node is new. */
  place(replica: Replica): { node: GpuNode; added: boolean };
  release(replica: Replica): void;
  nodeOf(replica: Replica): GpuNode | undefined;
}

export function createNodePlacement(): NodePlacement {
  const nodes: GpuNode[] = [];
  const byReplica = new Map<Replica, GpuNode>();
  const findFree = (node: GpuNode, count: number): number => {
    for (let start = 0; start + count <= node.slots.length; start++) {
      if (node.slots.slice(start, start + count).every((s) => s === null)) return start;
    }
    return -1;
  };
  return {
    nodes,
    place(replica) {
      const count = replica.spec.gpusPerReplica;
      let added = false;
      let node = nodes.find(
        (n) =>
          n.gpuType === replica.spec.gpuType && n.region === replica.spec.region && findFree(n, count) >= 0,
      );
      if (!node) {
        node = {
          index: nodes.length,
          gpuType: replica.spec.gpuType,
          region: replica.spec.region,
          slots: new Array<Replica | null>(Math.max(GPUS_PER_NODE, count)).fill(null),
        };
        nodes.push(node);
        added = true;
      }
      const start = findFree(node, count);
      for (let i = start; i < start + count; i++) node.slots[i] = replica;
      byReplica.set(replica, node);
      return { node, added };
    },
    release(replica) {
      const node = byReplica.get(replica);
      if (!node) return;
      for (let i = 0; i < node.slots.length; i++) if (node.slots[i] === replica) node.slots[i] = null;
      byReplica.delete(replica);
    },
    nodeOf: (replica) => byReplica.get(replica),
  };
}
