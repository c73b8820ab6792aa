import { z } from 'zod';
import { configSchema, fieldInfo, type ConfigKind, type ConfigPath, type ConfigSection } from './schema.js';

/** One config key as every generated surface sees it: flag, env var, README row, node.yml line. */
export interface ConfigKey {
  section: ConfigSection;
  key: string;
  /** YAML path, also the key of loadConfig's `flags`: `node.block_time`. */
  path: ConfigPath;
  /** oclif flag name, without the dashes: `node.node.block_time`. */
  flag: string;
  env: string;
  kind: ConfigKind;
  options?: readonly string[];
  /** As written in YAML or on a flag: `1s`, `false`, `""` is ''. */
  default: string;
  description: string;
}

/** The flag name of a YAML path: `node.block_time` → `node.node.block_time`. */
export function flagName(path: string): string {
  return `node.${path}`;
}

export function envName(section: string, key: string): string {
  return `NODED_${section}_${key}`.toUpperCase();
}

function readKeys(): ConfigKey[] {
  const keys: ConfigKey[] = [];
  for (const [section, sectionWithDefault] of Object.entries(configSchema.shape)) {
    // Each section is `strictObject(...).prefault({})`; the keys live in the object inside.
    // `supervise:` is a list of entries, not keys: it has no flags or env vars.
    const inner = sectionWithDefault.unwrap();
    if (!(inner instanceof z.ZodObject)) continue;
    const fields = inner.shape as Record<string, z.ZodType>;
    for (const [key, schema] of Object.entries(fields)) {
      const info = fieldInfo.get(schema);
      if (!info || !schema.description) throw new Error(`config schema: ${section}.${key} was not built by a field helper`);
      const path = `${section}.${key}` as ConfigPath;
      keys.push(
        Object.freeze({
          section: section as ConfigSection,
          key,
          path,
          flag: flagName(path),
          env: envName(section, key),
          kind: info.kind,
          ...(info.options ? { options: info.options } : {}),
          default: info.default,
          description: schema.description,
        }),
      );
    }
  }
  return keys;
}

let cachedKeys: readonly ConfigKey[] | undefined;

/** Every key of the schema, in node.yml order. */
export function configKeys(): readonly ConfigKey[] {
  cachedKeys ??= Object.freeze(readKeys());
  return cachedKeys;
}

export function configKeyAt(path: string): ConfigKey | undefined {
  return configKeys().find((k) => k.path === path);
}

/**
 * A value written as text (env var, flag, node.yml scalar) turned into the
 * type its key wants, where the text says so unambiguously. Anything else is
 * returned as it came, for the schema to reject with a message.
 */
export function valueFromText(kind: ConfigKind, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  switch (kind) {
    case 'bool':
      if (/^(true|1)$/i.test(value)) return true;
      if (/^(false|0)$/i.test(value)) return false;
      return value;
    case 'int':
    case 'number':
      return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value.trim()) ? Number(value) : value;
    default:
      return value;
  }
}
