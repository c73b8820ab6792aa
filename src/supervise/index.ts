export { SupervisedChild, SuperviseError, describeChild, describeExit, type ChildExit, type ChildState, type ChildStatus } from './child.js';
export { Supervisor, type SupervisorOptions } from './supervisor.js';
