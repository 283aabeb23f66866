// The benchmark's tables, printed to the terminal or written into a Markdown page
// (`npm run bench -- --write docs/performance.md` replaces what lies between the page's markers).
import { readFile, writeFile } from 'node:fs/promises'
import { readSection, replaceSection } from '../lib/generated-section.js'

export type Row = Record<string, string | number>

/** One table: a title saying what was measured, its rows, and lines said after it. */
export interface Table { title: string, rows: Row[], notes?: string[] }

export function printTable (table: Table): void {
  console.log(`\n${table.title}`)
  console.table(table.rows)
  for (const note of table.notes ?? []) console.log(note)
}

const cell = (value: string | number): string => String(value).replaceAll('|', '\\|')

function markdownTable (table: Table): string {
  const lines = [`#### ${table.title}`, '']
  const columns = [...new Set(table.rows.flatMap((row) => Object.keys(row)))]
  if (columns.length > 0) {
    lines.push(`| ${columns.map(cell).join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`)
    for (const row of table.rows) lines.push(`| ${columns.map((c) => cell(row[c] ?? '')).join(' | ')} |`)
    lines.push('')
  }
  for (const note of table.notes ?? []) lines.push(note, '')
  return lines.join('\n')
}

/**
 * The page's sections: every table of a whole run, and the comparison with another build
 * (`--only baseline` writes it alone).
 */
export const SECTION = { all: 'npm run bench', baseline: 'npm run bench -- --baseline' } as const

/** Fails now, not after the benchmarks, when `file` cannot take the tables. */
export async function checkWritable (file: string, sections: Array<keyof typeof SECTION>): Promise<void> {
  const page = await readFile(file, 'utf8')
  for (const section of sections) readSection(page, SECTION[section], file)
}

/** Replaces what the benchmark wrote into a section of `file` by a heading line and the tables. */
export async function writeTables (
  file: string, section: keyof typeof SECTION, heading: string, tables: Table[]
): Promise<void> {
  const page = await readFile(file, 'utf8')
  await writeFile(file,
    replaceSection(page, SECTION[section], [heading, '', ...tables.map(markdownTable)].join('\n'), file))
}
