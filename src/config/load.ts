import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, nearest } from './errors.js';
import { homePaths } from './home.js';
import { configKeyAt, configKeys, flagName, valueFromText } from './keys.js';
import { SUPERVISE_FIELDS, configSchema, type Config } from './schema.js';

/** Flag values as oclif gives them, keyed by YAML path (`node.block_time`). */
export type ConfigFlags = Readonly<Record<string, string | boolean | number | undefined>>;

export interface LoadConfigOptions {
  home: string;
  flags?: ConfigFlags;
  env?: NodeJS.ProcessEnv;
}

const SECTIONS = Object.keys(configSchema.shape);

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as the operator wrote it, for error lines: strings quoted, numbers bare. */
function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/**
 * The raw config as the layers (file < env < flags) build it up, with where
 * each value came from, so that an error names the file, env var or flag to fix.
 */
class ConfigLayers {
  /** Usually a map of sections; whatever the file held when it was not one. */
  private root: unknown = {};
  /** Path ('' for the root, `node`, `node.block_time`) → where its value came from. */
  private readonly sources = new Map<string, string>();

  addFile(content: unknown, fileName: string): void {
    // An empty or comments-only file means all defaults.
    if (content === null || content === '') return;
    if (!isMap(content)) {
      this.root = content;
      this.sources.set('', fileName);
      return;
    }
    for (const [section, entries] of Object.entries(content)) {
      if (isMap(entries)) {
        for (const [key, value] of Object.entries(entries)) this.set(section, key, value, fileName);
      } else if (entries === '') {
        // `node:` with every key commented out: the section's defaults.
        this.set(section, undefined, undefined, fileName);
      } else {
        (this.root as Record<string, unknown>)[section] = entries;
        this.sources.set(section, fileName);
      }
    }
  }

  addEnv(env: NodeJS.ProcessEnv): void {
    for (const { section, key, env: name } of configKeys()) {
      const value = env[name];
      // Empty counts as unset: `NODED_X=${X}` in a compose file must not override with "".
      if (value !== undefined && value !== '') this.set(section, key, value, `env ${name}`);
    }
  }

  addFlags(flags: ConfigFlags): void {
    for (const [path, value] of Object.entries(flags)) {
      if (value === undefined) continue;
      const dot = path.indexOf('.');
      this.set(dot < 0 ? path : path.slice(0, dot), dot < 0 ? undefined : path.slice(dot + 1), value, `flag --${flagName(path)}`);
    }
  }

  /** Sets `section.key` (or just makes sure the section exists when key is undefined). */
  private set(section: string, key: string | undefined, value: unknown, source: string): void {
    if (!isMap(this.root)) return; // the file's root is already wrong, and reported as such
    if (!(section in this.root)) {
      this.root[section] = {};
      this.sources.set(section, source);
    }
    const entries = this.root[section];
    if (key === undefined || !isMap(entries)) return; // a section that is not a map is reported as such
    const path = `${section}.${key}`;
    const kind = configKeyAt(path)?.kind;
    entries[key] = kind ? valueFromText(kind, value) : value;
    this.sources.set(path, source);
  }

  validate(): Config {
    const result = configSchema.safeParse(this.root);
    if (result.success) return result.data;
    const { issues } = result.error;
    const problems = issues.flatMap((issue) => this.describe(issue));
    const onlyUnknownKeys = issues.every((issue) => issue.code === 'unrecognized_keys');
    const fromFlags = issues.every((issue) => this.sourceOf(issue.path.join('.'))?.startsWith('flag ') === true);
    throw new ConfigError(onlyUnknownKeys ? 'CONFIG_UNKNOWN_KEY' : 'CONFIG_INVALID', problems, fromFlags);
  }

  private describe(issue: z.core.$ZodIssue): string[] {
    const path = issue.path.join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((name) => this.describeUnknown(path ? `${path}.${name}` : name));
    }
    const label = path ? `${path}: ` : '';
    const source = this.sourceOf(path);
    if (source !== undefined) return [`${source}: ${label}got ${show(this.valueAt(path))}, expected ${issue.message}`];
    // Nobody set this value: only a cross-field check (lazy_block_interval vs block_time) faults a default.
    return [`${label}got ${show(configKeyAt(path)?.default)} (the default), expected ${issue.message}`];
  }

  private describeUnknown(path: string): string {
    const source = this.sourceOf(path);
    if (path.startsWith('supervise.')) return `${source}: unknown key "${path}"; a supervise entry takes ${Object.keys(SUPERVISE_FIELDS).join(', ')}`;
    const dot = path.indexOf('.');
    if (dot < 0) {
      const suggestion = nearest(path, SECTIONS);
      const hint = suggestion ? ` — did you mean "${suggestion}"?` : `; the sections are ${SECTIONS.join(', ')}`;
      return `${source}: unknown section "${path}"${hint}`;
    }
    const suggestion = nearest(
      path,
      configKeys().map((k) => k.path),
    );
    const sectionKeys = configKeys().filter((k) => k.section === path.slice(0, dot));
    const hint = suggestion
      ? ` — did you mean "${suggestion}"?`
      : sectionKeys.length > 0
        ? `; ${path.slice(0, dot)} takes ${sectionKeys.map((k) => k.key).join(', ')}`
        : '';
    return `${source}: unknown key "${path}"${hint}`;
  }

  /** Where the value at `path` came from; a `supervise:` entry's fields came with the list. */
  private sourceOf(path: string): string | undefined {
    return this.sources.get(path.startsWith('supervise.') ? 'supervise' : path);
  }

  private valueAt(path: string): unknown {
    const step = (node: unknown, name: string) => (isMap(node) || Array.isArray(node) ? (node as Record<string, unknown>)[name] : undefined);
    return path === '' ? this.root : path.split('.').reduce<unknown>(step, this.root);
  }
}

/**
 * node.yml text → plain data. Every scalar is read as the string it is written
 * as (YAML's failsafe schema) and typed by its key afterwards, exactly as env
 * and flag values are: `0x00…` stays an address instead of becoming 0, and
 * `block_time: 5` is refused for lacking a unit.
 */
function readYaml(text: string, fileName: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { schema: 'failsafe', prettyErrors: false, lineCounter });
  const [error] = doc.errors;
  if (error) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    throw new ConfigError('CONFIG_SYNTAX', [`${fileName}:${line}:${col}: invalid YAML: ${error.message}`]);
  }
  return doc.toJS();
}

/** node.yml text alone over the defaults (no env, no flags): for tests and `noded doctor`. */
export function parseConfigText(text: string, fileName: string): Config {
  const layers = new ConfigLayers();
  layers.addFile(readYaml(text, fileName), fileName);
  return layers.validate();
}

function readConfigFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError('CONFIG_UNREADABLE', [`${file}: cannot read: ${(err as Error).message}`]);
  }
}

/**
 * The config of a home: defaults < <home>/config/node.yml < env NODED_<SECTION>_<KEY> < flags.
 * A missing node.yml means defaults; whether a missing home is an error is the caller's call.
 */
export function loadConfig({ home, flags = {}, env = process.env }: LoadConfigOptions): Config {
  const file = homePaths(home).configFile;
  const layers = new ConfigLayers();
  const text = readConfigFile(file);
  if (text !== undefined) layers.addFile(readYaml(text, file), file);
  layers.addEnv(env);
  layers.addFlags(flags);
  return layers.validate();
}
