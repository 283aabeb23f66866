/** `$or` and `$and` (docs/query-language.md, "Either or"): their bounds, also inside `$elemMatch`. */
export const MAX_BRANCHES = 10
export const MAX_DEPTH = 3
export const MAX_CONDITIONS = 50
