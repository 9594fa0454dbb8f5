/**
 * "What does gemma2 do?" is answered by its entry in core/architectures.ts, and a tensor's name is
 * spelled in core/tensor-names.ts only. This reads every source file's syntax tree and fails on a
 * branch on an architecture name (`arch === 'gemma2'`, `case 'phi3':`, `{ gemma2: 2 }[arch]`) or
 * a tensor-name literal (`'blk.'`, `'attn_q.weight'`, `` `${role}.bias` ``) anywhere else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ARCHITECTURE_NAMES } from '../src-main/core/architectures';
import { TENSOR_NAMES } from '../src-main/core/tensor-names';

const ROOT = resolve(import.meta.dirname, '..');
const ARCHITECTURE_FILE = 'src-main/core/architectures.ts';
const TENSOR_NAMES_FILE = 'src-main/core/tensor-names.ts';

/**
 * Branches on a name that is an architecture's but means something else, by file and code. Keep
 * it short: each entry says why it is not an architecture branch.
 */
const ALLOWED: readonly { file: string; code: string; why: string }[] = [
  {
    file: 'src-main/core/tokenizer/index.ts',
    code: "case 'llama'",
    why: 'tokenizer.ggml.model "llama" is the SentencePiece tokenizer',
  },
  {
    file: 'src-main/core/tokenizer/vocab.ts',
    code: "case 'llama'",
    why: 'tokenizer.ggml.model "llama" is the SentencePiece tokenizer',
  },
  {
    file: 'src-main/core/tokenizer/index.ts',
    code: "case 'bert'",
    why: 'tokenizer.ggml.model "bert" is the WordPiece tokenizer',
  },
  {
    file: 'src-main/core/tokenizer/vocab.ts',
    code: "case 'bert'",
    why: 'tokenizer.ggml.model "bert" is the WordPiece tokenizer',
  },
  // llama.cpp's size classes span architectures the engine does not run (deci, olmo, jais2).
  { file: 'src-main/core/quant-recipes.ts', code: "case 'llama'", why: 'llama.cpp names a 70B by its loader' },
  { file: 'src-main/core/quant-recipes.ts', code: "case 'qwen2'", why: 'llama.cpp names a 70B by its loader' },
];

const ARCHITECTURES: ReadonlySet<string> = new Set(ARCHITECTURE_NAMES);
/** The last part of every role's name: "attn_q", "token_embd", ... */
const STEMS = Object.values(TENSOR_NAMES).map((template) => template.split('.').pop()!);
const TENSOR_NAME_LITERAL = new RegExp(
  `\\bblk\\\\?\\.|(^|[^\\w])(${STEMS.join('|')})\\\\?\\.(weight|bias)\\b|^\\.(weight|bias)\\b`,
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const stringText = (node: ts.Node): string | undefined =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : undefined;

/** `vocab.model === 'llama'`, `tokenizerModel !== 'llama'`: a tokenizer model, not an architecture. */
const isTokenizerModel = (node: ts.Node) => /model$/i.test(node.getText());

function objectLiteralOf(node: ts.Expression): ts.ObjectLiteralExpression | undefined {
  let inner = node;
  while (ts.isParenthesizedExpression(inner)) inner = inner.expression;
  return ts.isObjectLiteralExpression(inner) ? inner : undefined;
}

/** "file:line: code" for each violation in one file's text. */
function violations(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const code = node.getText().split('\n')[0]!;
    if (ALLOWED.some((a) => a.file === file && code.startsWith(a.code))) return;
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}: ${code}`);
  };
  const isArchitecture = (node: ts.Node) => ARCHITECTURES.has(stringText(node) ?? '');
  const checkArchitecture = file !== ARCHITECTURE_FILE;
  const checkTensorNames = file !== TENSOR_NAMES_FILE;
  const visit = (node: ts.Node): void => {
    if (checkArchitecture) {
      if (
        ts.isBinaryExpression(node) &&
        [
          ts.SyntaxKind.EqualsEqualsEqualsToken,
          ts.SyntaxKind.ExclamationEqualsEqualsToken,
          ts.SyntaxKind.EqualsEqualsToken,
          ts.SyntaxKind.ExclamationEqualsToken,
        ].includes(node.operatorToken.kind)
      ) {
        const [name, other] = isArchitecture(node.right) ? [node.right, node.left] : [node.left, node.right];
        if (isArchitecture(name) && !isTokenizerModel(other)) report(node, 'architecture branch');
      }
      if (ts.isCaseClause(node) && isArchitecture(node.expression)) report(node, 'architecture branch');
      if (ts.isElementAccessExpression(node)) {
        const table = objectLiteralOf(node.expression);
        if (
          table?.properties.some(
            (p) =>
              p.name && ARCHITECTURES.has(ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) ? p.name.text : ''),
          )
        ) {
          report(node, 'per-architecture table');
        }
      }
    }
    if (
      checkTensorNames &&
      (ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateLiteralToken(node) ||
        ts.isRegularExpressionLiteral(node))
    ) {
      const match = TENSOR_NAME_LITERAL.exec(node.text);
      if (match) report(node, `tensor-name literal (${match[0].trim()})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('one place per architecture and per tensor name', () => {
  it('finds the branches and literals it is meant to find', () => {
    const bad = [
      "const scale = arch === 'gemma2' ? 50 : 0;",
      "if ('gpt-oss' !== hp.arch) run();",
      "switch (arch) { case 'phi3': break; }",
      'const period = { gemma2: 2, gemma3: 6 }[arch];',
      "const name = 'blk.0.attn_q.weight';",
      'const name = `blk.${l}.${role}`;',
      'const bias = `${role}.bias`;',
      "gguf.tensor('token_embd.weight');",
      'const layer = /^blk\\.(\\d+)\\./;',
    ];
    for (const line of bad) expect(violations('src-main/x.ts', line), line).toHaveLength(1);
    const fine = [
      "if (vocab.model === 'llama') run();",
      "tensorName('attn_q', 0, 'bias');",
      "const family = 'gemma';",
      "const kinds = ['_norm.weight', 'time_mix_first.weight'];",
      '// blk.0.attn_q.weight in a comment',
    ];
    for (const line of fine) expect(violations('src-main/x.ts', line), line).toEqual([]);
  });

  it('no source file outside the two tables branches on an architecture or spells a tensor name', () => {
    const files = sourceFiles(join(ROOT, 'src-main'));
    const found = files.flatMap((path) => {
      const file = relative(ROOT, path).split('\\').join('/');
      return violations(file, readFileSync(path, 'utf8'));
    });
    expect(found).toEqual([]);
  });
});
