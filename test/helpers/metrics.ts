/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4):
 * it throws on the first line that breaks the grammar, so a test that reads
 * /metrics through it checks the format as well as the values.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_NAME = '[a-zA-Z_][a-zA-Z0-9_]*';
// A label value: any characters but `"`, `\` and newline, or the escapes \\ \" \n.
const LABEL_VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
// Values as Go's strconv.ParseFloat reads them (Prometheus does): Inf and NaN in any case (prom-client writes "Nan").
const VALUE = '[+-]?(?:[Ii][Nn][Ff]|[Nn][Aa][Nn]|(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)';
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL_NAME}=${LABEL_VALUE})(?:,${LABEL_NAME}=${LABEL_VALUE})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);
const LABEL_PAIR = new RegExp(`(${LABEL_NAME})=(${LABEL_VALUE})`, 'g');
const HELP_LINE = new RegExp(`^# HELP (${NAME}) (.*)$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

const unescape = (quoted: string) => quoted.slice(1, -1).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));

function parseValue(text: string): number {
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  return /nan$/i.test(text) ? Number.NaN : Number(text);
}

/** The family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` samples are its own. */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sample);
  if (direct) return direct;
  const base = sample.replace(/_(bucket|sum|count)$/, '');
  const family = families.get(base);
  return family && (family.type === 'histogram' || family.type === 'summary') ? family : undefined;
}

/** Parses a whole exposition; throws naming the line on any departure from the grammar. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | null = null;
  let pendingHelp: { name: string; help: string } | null = null;
  const lines = text.split('\n');
  if (lines.pop() !== '') throw new Error('the exposition must end with a newline');
  lines.forEach((line, i) => {
    const fail = (why: string): never => {
      throw new Error(`line ${i + 1} ${JSON.stringify(line)}: ${why}`);
    };
    if (line === '') return;
    let m: RegExpExecArray | null;
    if ((m = HELP_LINE.exec(line))) {
      if (families.has(m[1]!) || pendingHelp) fail('a second HELP, or a HELP without TYPE after it');
      pendingHelp = { name: m[1]!, help: m[2]! };
      return;
    }
    if ((m = TYPE_LINE.exec(line))) {
      const name = m[1]!;
      if (families.has(name)) fail(`a second TYPE for ${name}`);
      if (!pendingHelp || pendingHelp.name !== name) fail(`TYPE for ${name} without its HELP just before`);
      if (current) closed.add(current.name);
      current = { name, type: m[2]!, help: pendingHelp!.help, samples: [] };
      families.set(name, current);
      pendingHelp = null;
      return;
    }
    if (line.startsWith('#')) fail('a comment that is neither HELP nor TYPE');
    m = SAMPLE_LINE.exec(line);
    if (!m) fail('not `name{label="value",…} value`');
    const family = familyOf(m![1]!, families);
    if (!family) fail(`sample ${m![1]} has no TYPE before it`);
    if (family !== current || closed.has(family.name)) fail(`sample of ${family!.name} outside its own group of lines`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m![2] ?? '').matchAll(LABEL_PAIR)) {
      if (k! in labels) fail(`label ${k} twice`);
      labels[k!] = unescape(v!);
    }
    family!.samples.push({ name: m![1]!, labels, value: parseValue(m![3]!) });
  });
  if (pendingHelp) throw new Error(`HELP for ${(pendingHelp as { name: string }).name} without a TYPE`);
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Buckets cumulative and ending at +Inf, which equals _count, for every label set. */
function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  const key = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of family.samples) {
    if (!series.has(key(s.labels))) series.set(key(s.labels), []);
    series.get(key(s.labels))!.push(s);
  }
  for (const [labels, samples] of series) {
    const buckets = samples.filter((s) => s.name === `${family.name}_bucket`);
    const count = samples.find((s) => s.name === `${family.name}_count`);
    if (!count || !samples.some((s) => s.name === `${family.name}_sum`)) throw new Error(`${family.name}${labels}: _sum or _count missing`);
    if (buckets.at(-1)?.labels.le !== '+Inf') throw new Error(`${family.name}${labels}: the last bucket is not le="+Inf"`);
    buckets.reduce((prev, b) => {
      if (b.value < prev) throw new Error(`${family.name}${labels}: bucket le=${b.labels.le} below the one before`);
      return b.value;
    }, 0);
    if (buckets.at(-1)!.value !== count.value) throw new Error(`${family.name}${labels}: +Inf bucket ${buckets.at(-1)!.value} != _count ${count.value}`);
  }
}

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = familyOf(name, families);
  const sample = family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample?.value;
}

/** GET <base>/metrics, parsed strictly; also returns the raw text. */
export async function scrape(base: string): Promise<{ text: string; families: Map<string, Family>; contentType: string }> {
  const res = await fetch(`${base}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${base}/metrics: HTTP ${res.status}`);
  const text = await res.text();
  return { text, families: parseExposition(text), contentType: res.headers.get('content-type') ?? '' };
}
