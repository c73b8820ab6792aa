export {
  createNodeMetrics,
  type NodeMetrics,
  type NodeReadings,
  type ChildReading,
  type BlockOrigin,
  type ExecutionMethod,
  type GossipTopic,
} from './metrics.js';
