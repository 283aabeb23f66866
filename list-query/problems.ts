import type { ErrorCode, ProblemItem } from '../schemas/problem.js'

export type { ErrorCode, ProblemItem }

/** docs/errors.md: a request's problems, every one of them up to 20. */
export const MAX_PROBLEMS = 20

export class Problems {
  readonly items: ProblemItem[] = []

  /** A problem already listed (same place and code, found again by a later check) is listed once. */
  add (param: string, pointer: string, code: ErrorCode, message: string): void {
    if (this.items.length >= MAX_PROBLEMS) return
    for (const item of this.items) if (item.pointer === pointer && item.code === code && item.param === param) return
    this.items.push({ param, pointer, code, message })
  }

  get full (): boolean {
    return this.items.length >= MAX_PROBLEMS
  }

  get empty (): boolean {
    return this.items.length === 0
  }
}

/** RFC 6901: `~` and `/` are escaped inside a reference token. */
export function pointerToken (key: string | number): string {
  const text = String(key)
  return text.includes('~') || text.includes('/') ? text.replaceAll('~', '~0').replaceAll('/', '~1') : text
}

export function childPointer (parent: string, key: string | number): string {
  return `${parent}/${pointerToken(key)}`
}
