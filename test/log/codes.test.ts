import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The logger gives an error line without a code one named after its module (test/log/logger.test.ts);
// this makes sure no line relies on that: every error and fatal call in the code names its own.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LOGGER = /(^|\.)(log|logger)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'gen' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

interface LogCall {
  where: string;
  level: string;
  /** The literal code, `dynamic` for `{ code }` from a variable, undefined for none. */
  code: string | undefined;
}

function logCalls(file: string): LogCall[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const calls: LogCall[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && LOGGER.test(node.expression.expression.getText(source))) {
      const level = node.expression.name.text;
      if (level === 'error' || level === 'fatal' || level === 'warn') {
        const [first] = node.arguments;
        let code: string | undefined;
        if (first && ts.isObjectLiteralExpression(first)) {
          for (const p of first.properties) {
            if (ts.isShorthandPropertyAssignment(p) && p.name.text === 'code') code = 'dynamic';
            if (ts.isPropertyAssignment(p) && p.name.getText(source) === 'code') code = ts.isStringLiteral(p.initializer) ? p.initializer.text : 'dynamic';
          }
        }
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        calls.push({ where: `${relative(ROOT, file)}:${line + 1}`, level, code });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return calls;
}

const calls = ['src', 'commands'].flatMap((d) => sourceFiles(join(ROOT, d))).flatMap(logCalls);

describe('log codes', () => {
  it('finds the log calls it checks', () => {
    expect(calls.find((c) => c.code === 'DA_SUBMIT_FAILED')).toMatchObject({ where: expect.stringMatching(/^src\/da\/submitter\.ts:/), level: 'error' });
  });

  it('every error and fatal call in src/ and commands/ names a code', () => {
    const missing = calls.filter((c) => c.level !== 'warn' && c.code === undefined).map((c) => c.where);
    expect(missing).toEqual([]);
  });

  it('codes are UPPER_SNAKE and the README lists every one', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const codes = [...new Set(calls.map((c) => c.code).filter((c): c is string => c !== undefined && c !== 'dynamic'))];
    expect(codes.filter((c) => !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(c))).toEqual([]);
    expect(codes.filter((c) => !readme.includes(`\`${c}\``))).toEqual([]);
  });
});
