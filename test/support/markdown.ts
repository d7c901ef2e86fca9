/** One fenced code block of a Markdown page: its info string's language and `key=value` words, and its text. */
export interface CodeBlock {
  lang: string;
  attributes: Record<string, string>;
  text: string;
  /** The line of its opening fence, from 1. */
  line: number;
}

/** The fenced code blocks (```) of a Markdown page, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { lang: string; attributes: Record<string, string>; line: number; lines: string[] } | undefined;
  markdown.split('\n').forEach((line, index) => {
    if (line.startsWith('```')) {
      if (open) {
        blocks.push({ lang: open.lang, attributes: open.attributes, line: open.line, text: open.lines.join('\n') + '\n' });
        open = undefined;
      } else {
        const [lang = '', ...words] = line.slice(3).trim().split(/\s+/);
        open = { lang, attributes: Object.fromEntries(words.map((word) => word.split('=', 2) as [string, string])), line: index + 1, lines: [] };
      }
    } else {
      open?.lines.push(line);
    }
  });
  return blocks;
}

/** A `console` block as commands (the `$ ` lines) and the lines each prints. */
export function consoleCommands(block: CodeBlock): { command: string; prints: string[] }[] {
  const commands: { command: string; prints: string[] }[] = [];
  for (const line of block.text.trimEnd().split('\n')) {
    if (line.startsWith('$ ')) commands.push({ command: line.slice(2), prints: [] });
    else commands.at(-1)?.prints.push(line);
  }
  return commands;
}

/** The headings of a page as GitHub makes their anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The links of a page outside code: `[text](target)`. */
export function links(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, index) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) found.push({ target: match[1]!, line: index + 1 });
  });
  return found;
}

/** A one-line shell command as its words, with '…' and "…" quoting (no escapes, no expansion). */
export function shellWords(command: string): string[] {
  return (command.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((word) => word.replace(/^'(.*)'$|^"(.*)"$/, '$1$2'));
}
