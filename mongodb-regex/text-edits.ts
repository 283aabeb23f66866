// A pattern is rewritten twice before it is analysed (read-pattern.ts, analysed-pattern.ts); a
// message quotes a part of it as the client wrote it, found back through the pieces replaced.

/** A piece of a text replaced: `start`–`end` in the original, `at`–`to` in the rewritten text. */
export interface PlacedEdit { start: number, end: number, at: number, to: number }

/** Where a position of the rewritten text was in the original; one inside a replaced piece goes to its start. */
export function originalPosition (edits: readonly PlacedEdit[], position: number): number {
  let shift = 0
  for (const edit of edits) {
    if (position <= edit.at) break
    if (position < edit.to) return edit.start
    shift = edit.end - edit.to
  }
  return position + shift
}

/** The original text between two positions of the rewritten one. */
export type Quote = (start: number, end: number) => string

export const quoteThrough = (original: string, edits: readonly PlacedEdit[]): Quote =>
  (start, end) => original.slice(originalPosition(edits, start), originalPosition(edits, end))
