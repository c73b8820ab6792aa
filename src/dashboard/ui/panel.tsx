import { Box, Text } from 'ink';
import { LEVEL_WORD, blockListHeader, blockRow, type Level, type Line, type PanelView } from '../view-model.js';
import type { BlockSummary } from '../source.js';

const COLOUR: Record<Level, string> = { ok: 'green', warn: 'yellow', fail: 'red', stale: 'gray' };

/** One line of spans, cut at the panel's edge; colours only when `colour` (the word is always there). */
export function LineText({ line, colour, inverse = false }: { line: Line; colour: boolean; inverse?: boolean }) {
  return (
    <Text wrap="truncate-end" inverse={inverse}>
      {line.map((s, i) => (
        <Text key={i} color={colour && s.level ? COLOUR[s.level] : undefined} dimColor={s.dim} bold={s.bold}>
          {s.text}
        </Text>
      ))}
    </Text>
  );
}

/**
 * A line of `width` columns whose last span (a state word) is never cut: the
 * spans before it are cut (with …) to leave it room.
 */
export function LineKeepingLast({ line, width, colour }: { line: Line; width: number; colour: boolean }) {
  const rest = line.slice(0, -1);
  const last = line[line.length - 1]!;
  const end = rest[rest.length - 1];
  // The gap before the state is kept apart, so cutting the rest never closes it.
  const trimmed = end ? [...rest.slice(0, -1), { ...end, text: end.text.trimEnd() }] : rest;
  return (
    <Box width={width}>
      <Box flexShrink={1}>
        <LineText line={trimmed} colour={colour} />
      </Box>
      <Box flexShrink={0} marginLeft={2}>
        <LineText line={[last]} colour={colour} />
      </Box>
    </Box>
  );
}

export function PanelTitle({ title, level, colour, note }: { title: string; level: Level; colour: boolean; note?: string }) {
  return (
    <LineText colour={colour} line={[{ text: title, bold: true }, { text: ' ' }, { text: `[${LEVEL_WORD[level]}]`, level }, { text: note ?? '', dim: true }]} />
  );
}

/**
 * A panel of exactly `height` rows: its title, then as many lines as fit —
 * the first ones, or with `tail` the last ones (a log).
 */
export function Panel({ panel, width, height, colour, tail = false }: { panel: PanelView; width: number; height: number; colour: boolean; tail?: boolean }) {
  const room = Math.max(0, height - 1);
  const all = panel.fit ? panel.fit(width, room) : panel.lines;
  const lines = room === 0 ? [] : tail ? all.slice(-room) : all.slice(0, room);
  const hidden = all.length - lines.length;
  return (
    <Box flexDirection="column" width={width} height={height} overflow="hidden">
      <PanelTitle title={panel.title} level={panel.level} colour={colour} note={hidden > 0 && !tail ? ` +${hidden} more` : undefined} />
      {lines.map((line, i) => (
        <LineText key={i} line={line} colour={colour} />
      ))}
    </Box>
  );
}

/** The latest blocks, newest first, scrolled so the selected one (marked `›`) is in view. */
export function BlockList(props: {
  blocks: BlockSummary[];
  includedHeight: number;
  selected: number;
  width: number;
  height: number;
  hashChars: number;
  colour: boolean;
  level: Level;
}) {
  const { blocks, selected, height, colour } = props;
  const room = Math.max(0, height - 2);
  const first = Math.max(0, Math.min(selected - room + 1, blocks.length - room));
  const shown = blocks.slice(first, first + room);
  return (
    <Box flexDirection="column" width={props.width} height={height} overflow="hidden">
      <PanelTitle title="BLOCKS" level={props.level} colour={colour} note={blocks.length ? `  ${selected + 1}/${blocks.length}  enter: open` : '  none yet'} />
      <LineText line={[{ text: '  ' }, ...blockListHeader(props.hashChars)]} colour={colour} />
      {shown.map((b, i) => {
        const isSelected = first + i === selected;
        return (
          <LineText
            key={b.height}
            inverse={isSelected && colour}
            line={[{ text: isSelected ? '› ' : '  ', bold: true }, ...blockRow(b, props.includedHeight, props.hashChars)]}
            colour={colour}
          />
        );
      })}
    </Box>
  );
}
