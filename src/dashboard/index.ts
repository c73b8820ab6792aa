export { watchNode, openNodeDashboard, type DashboardHandle } from './terminal.js';
export { dashboardLogFile, isTerminal, wantsColour } from './tty.js';
export { DashboardFeed, describeFailure, type FeedState, type FeedOptions } from './feed.js';
export { HttpSource } from './http-source.js';
export { NodeSource } from './node-source.js';
export { RecentBlocks, blockDetail, summarizeBlock, type BlockDetail, type BlockSummary, type DashboardSource, type NodeSnapshot } from './source.js';
export { buildView, type DashboardView, type DashboardMode, type Level, type Line, type PanelView } from './view-model.js';
export { DashboardApp } from './ui/app.js';
