import { showStderrOnFailure } from './helpers/spawned.js';

showStderrOnFailure();
