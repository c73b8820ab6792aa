import { Box } from 'ink';
import type { Layout } from '../layout.js';
import type { BlockDetail } from '../source.js';
import { HELP, clockTime, type DashboardView, type Line } from '../view-model.js';
import { BlockList, LineText, Panel } from './panel.js';

/** Every panel, in three bands: CHAIN | DA, P2P | HEALTH · EXECUTION · CHILDREN, BLOCKS | WARNINGS · LOG. */
export function MainScreen({ view, layout, selected, colour }: { view: DashboardView; layout: Layout; selected: number; colour: boolean }) {
  const { right } = layout;
  const rightBottom = layout.columns - layout.blocksWidth - 1;
  const childRows = layout.mid - 5;
  return (
    <Box flexDirection="column">
      <Box height={layout.top}>
        <Panel panel={view.chain} width={layout.half} height={layout.top} colour={colour} />
        <Box width={1} />
        <Panel panel={view.da} width={right} height={layout.top} colour={colour} />
      </Box>
      <Box height={layout.mid}>
        <Panel panel={view.p2p} width={layout.half} height={layout.mid} colour={colour} />
        <Box width={1} />
        <Box flexDirection="column" width={right}>
          <Panel panel={view.health} width={right} height={3} colour={colour} />
          <Panel panel={view.execution} width={right} height={2} colour={colour} />
          <Panel panel={view.children} width={right} height={childRows} colour={colour} />
        </Box>
      </Box>
      <Box height={layout.bottom}>
        <BlockList
          blocks={view.blocks}
          includedHeight={view.includedHeight}
          selected={selected}
          width={layout.blocksWidth}
          height={layout.bottom}
          hashChars={layout.hashChars}
          colour={colour}
          level={view.chain.level === 'stale' ? 'stale' : 'ok'}
        />
        <Box width={1} />
        <Box flexDirection="column" width={rightBottom}>
          {layout.warnings > 0 && <Panel panel={view.warnings} width={rightBottom} height={layout.warnings} colour={colour} />}
          {view.log && layout.log > 0 && <Panel panel={view.log} width={rightBottom} height={layout.log} colour={colour} tail />}
        </Box>
      </Box>
    </Box>
  );
}

export function HelpScreen({ layout, colour }: { layout: Layout; colour: boolean }) {
  return (
    <Box flexDirection="column" height={layout.body}>
      <LineText line={[{ text: 'KEYS AND STATES', bold: true }]} colour={colour} />
      {HELP.map(([key, what], i) => (
        <LineText
          key={i}
          colour={colour}
          line={[
            {
              text: `  ${key.padEnd(10)}`,
              bold: true,
              level: key === 'ok' ? 'ok' : key === 'WARN' ? 'warn' : key === 'FAIL' ? 'fail' : key === 'stale' ? 'stale' : undefined,
            },
            { text: what },
          ]}
        />
      ))}
    </Box>
  );
}

export type BlockLoad = { height: number; detail: BlockDetail | null; error: string | null };

const FIELD_WIDTH = 19;
const HASH_HEX = /^[0-9A-F]{64}$/;

/** One block: header fields, DA heights, txs (as many as fit). */
export function BlockScreen({ load, layout, colour }: { load: BlockLoad; layout: Layout; colour: boolean }) {
  const { detail } = load;
  // A 32-byte hash in hex needs 64 columns beside its name; narrower, base64 (as GetBlock's JSON writes bytes) keeps it whole.
  const hexFits = layout.columns >= FIELD_WIDTH + 64;
  const value = (v: string) => (hexFits || !HASH_HEX.test(v) ? v : Buffer.from(v, 'hex').toString('base64'));
  const field = (name: string, v: string): Line => [{ text: name.padEnd(FIELD_WIDTH), dim: true }, { text: value(v) }];
  const lines: Line[] = detail
    ? [
        [
          { text: `BLOCK ${detail.height}`, bold: true },
          { text: `  ${clockTime(detail.time)}  ${detail.txs} txs${hexFits ? '' : '  (hashes in base64; hex from 84 columns)'}`, dim: true },
        ],
        field('hash', detail.hash),
        ...detail.header.map(([k, v]) => field(k, v)),
        field('signer', detail.signer),
        [
          { text: 'DA heights'.padEnd(19), dim: true },
          detail.header_da_height > 0
            ? { text: `header ${detail.header_da_height}, data ${detail.data_da_height}`, level: 'ok' }
            : { text: 'not on DA yet', level: 'warn' },
        ],
        [{ text: `txs (${detail.txs})`, bold: true }],
        ...detail.txList.map((tx, i): Line => [{ text: `  ${String(i).padStart(4)}  ${tx}` }]),
      ]
    : [
        [{ text: `BLOCK ${load.height}`, bold: true }],
        load.error ? [{ text: `cannot read it: ${load.error}`, level: 'fail' }] : [{ text: 'reading…', dim: true }],
      ];
  // Exactly the body's rows, the count of what is left out included: a line more pushes the title off the top.
  const room = lines.length > layout.body ? layout.body - 1 : layout.body;
  return (
    <Box flexDirection="column" height={layout.body} overflow="hidden">
      {lines.slice(0, room).map((line, i) => (
        <LineText key={i} line={line} colour={colour} />
      ))}
      {lines.length > room && <LineText line={[{ text: `… ${lines.length - room} more lines`, dim: true }]} colour={colour} />}
    </Box>
  );
}
