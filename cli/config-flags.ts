import { Flags, type Interfaces } from '@oclif/core';
import { configKeys } from '../src/config/index.js';

/**
 * One `--node.<section>.<key>` flag per config key, generated from the config
 * schema so flags, help text and validation cannot drift apart. Values stay
 * strings here; the schema validates them and names the flag on error.
 * With `section`, only that section's flags.
 */
export function configFlags(section?: string) {
  const flags: Interfaces.FlagInput = {};
  for (const k of configKeys()) {
    if (section !== undefined && k.section !== section) continue;
    const help = `${k.description} (default: ${k.default === '' ? '""' : k.default})`;
    flags[k.flag] =
      k.kind === 'bool'
        ? Flags.boolean({ description: help, allowNo: true, helpGroup: `CONFIG ${k.section.toUpperCase()}` })
        : Flags.string({ description: help, helpGroup: `CONFIG ${k.section.toUpperCase()}`, ...(k.options ? { options: k.options } : {}) });
  }
  return flags;
}

/** The config flags actually given, keyed by YAML path (`node.block_time`), for loadConfig. */
export function givenConfigFlags(parsed: Record<string, unknown>): Record<string, string | boolean> {
  const given: Record<string, string | boolean> = {};
  for (const k of configKeys()) {
    const v = parsed[k.flag];
    if (v !== undefined) given[k.path] = v as string | boolean;
  }
  return given;
}
