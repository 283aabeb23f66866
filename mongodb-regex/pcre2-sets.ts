// Sets PCRE2 (UTF mode, without UCP, as MongoDB runs it) reads otherwise than JavaScript does
// (pcre2pattern, "Generic character types"): the stand-in's translation and the safety analysis
// both take them from here.
import type { CharRange } from 'refa'

/** `\s`: ASCII white space, where JavaScript's also takes U+00A0, U+2003… */
export const SPACE: readonly CharRange[] = [{ min: 0x09, max: 0x0d }, { min: 0x20, max: 0x20 }]
/** `\v`: every vertical space, where JavaScript's is U+000B alone. */
export const VERTICAL_SPACE: readonly CharRange[] = [
  { min: 0x0a, max: 0x0d }, { min: 0x85, max: 0x85 }, { min: 0x2028, max: 0x2029 }
]
