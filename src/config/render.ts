import { Document, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { formatDuration } from './duration.js';
import { configKeys, valueFromText, type ConfigKey } from './keys.js';
import { parseConfigText } from './load.js';
import { SUPERVISE_FIELDS, type ConfigPath, type SuperviseEntryYaml } from './schema.js';

/** Values to write instead of defaults, by YAML path; a duration may be given as milliseconds. */
export type ConfigOverrides = Partial<Record<ConfigPath, string | number | boolean>>;

const HEADER = [
  ' noded configuration.',
  ' Precedence: defaults < this file < env NODED_<SECTION>_<KEY> < flags --node.<section>.<key>.',
  ' Durations need a unit: 500ms, 1s, 2m, 1h, 1m30s. Relative paths are under the home directory.',
].join('\n');

function showDefault(key: ConfigKey): string {
  return key.default === '' ? '""' : key.default;
}

function keyComment(key: ConfigKey): string {
  const options = key.options ? `one of ${key.options.join(', ')}; ` : '';
  return ` ${key.description} (${options}default: ${showDefault(key)})`;
}

/** The value as node.yml writes it: typed scalars for bools and numbers, `1s` for durations. */
function yamlValue(key: ConfigKey, override: string | number | boolean | undefined): unknown {
  if (override === undefined) return valueFromText(key.kind, key.default);
  if (key.kind === 'duration' && typeof override === 'number') return formatDuration(override);
  return valueFromText(key.kind, override);
}

/**
 * A complete node.yml: every section and key, each under a comment with its
 * help text and default. Overrides are validated, so what this returns always
 * loads; `parseConfigText(renderNodeYml())` equals `defaultConfig()`.
 */
export function renderNodeYml(overrides: ConfigOverrides = {}, supervise: SuperviseEntryYaml[] = []): string {
  const keys = configKeys();
  const sections: Record<string, Record<string, unknown>> = {};
  for (const key of keys) (sections[key.section] ??= {})[key.key] = yamlValue(key, overrides[key.path]);

  // yaml quotes whatever would read back as another type (`""`, `"0x00…"`).
  const doc = new Document(sections);
  doc.commentBefore = HEADER;
  const sectionPairs = (doc.contents as YAMLMap).items as Pair<Scalar, YAMLMap<Scalar, unknown>>[];
  sectionPairs.forEach((sectionPair, sectionIndex) => {
    sectionPair.key.spaceBefore = sectionIndex > 0;
    sectionPair.value!.items.forEach((pair, keyIndex) => {
      const key = keys.find((k) => k.section === sectionPair.key.value && k.key === pair.key.value)!;
      pair.key.spaceBefore = keyIndex > 0;
      pair.key.commentBefore = keyComment(key);
    });
  });
  const supervisePair = doc.createPair('supervise', supervise) as Pair<Scalar, unknown>;
  supervisePair.key.spaceBefore = true;
  supervisePair.key.commentBefore = SUPERVISE_COMMENT;
  (doc.contents as YAMLMap).items.push(supervisePair);
  const text = doc.toString({ lineWidth: 0 });
  parseConfigText(text, 'node.yml (rendered)');
  return text;
}

/** What node.yml says above `supervise:`, each entry field with its help. */
const SUPERVISE_COMMENT = [
  ' Child processes `noded start` runs before the node and stops after it (an execution client, say):',
  ' a list of maps with these fields (name and command are required).',
  ...Object.entries(SUPERVISE_FIELDS).map(([field, help]) => `   ${field}: ${help}`),
].join('\n');

/** The README's table of config keys: key, flag / env, default, meaning. */
export function renderConfigTable(): string {
  const escape = (s: string) => s.replace(/\|/g, '\\|');
  const rows = configKeys().map(
    (k) =>
      `| \`${k.path}\` | \`--${k.flag}\`<br>\`${k.env}\` | \`${showDefault(k)}\` | ${escape(k.description)}${k.options ? ` (${k.options.join(' \\| ')})` : ''} |`,
  );
  // `supervise:` entries live in node.yml alone: no flag, no env var.
  const superviseRows = Object.entries(SUPERVISE_FIELDS).map(([field, help]) => `| \`supervise[].${field}\` | node.yml only | | ${escape(help)} |`);
  return ['| key | flag / env | default | meaning |', '|---|---|---|---|', ...rows, ...superviseRows].join('\n');
}
