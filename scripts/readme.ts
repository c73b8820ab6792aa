import { fileURLToPath } from 'node:url';

export const README_PATH = fileURLToPath(new URL('../README.md', import.meta.url));

/** The README text with what lies between `<!-- name:start -->` and `<!-- name:end -->` replaced by `text`. */
export function replaceMarked(readme: string, name: string, text: string): string {
  const [startMark, endMark] = [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`];
  const start = readme.indexOf(startMark);
  const end = readme.indexOf(endMark);
  if (start < 0 || end < start) throw new Error(`README.md lacks the ${startMark} … ${endMark} markers`);
  return `${readme.slice(0, start + startMark.length)}\n${text}\n${readme.slice(end)}`;
}

/** The README text with the table between the config-table markers replaced. */
export const replaceConfigTable = (readme: string, table: string): string => replaceMarked(readme, 'config-table', table);
