import { fileURLToPath } from 'node:url';

export const README_PATH = fileURLToPath(new URL('../README.md', import.meta.url));
const START = '<!-- config-table:start -->';
const END = '<!-- config-table:end -->';

/** The README text with the table between the config-table markers replaced. */
export function replaceConfigTable(readme: string, table: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md lacks the ${START} … ${END} markers`);
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}
