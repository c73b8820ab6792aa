export {
  createNodeMetrics,
  type NodeMetrics,
  type NodeReadings,
  type HaReadings,
  type ChildReading,
  type BlockOrigin,
  type ExecutionMethod,
  type GossipTopic,
} from './metrics.js';
