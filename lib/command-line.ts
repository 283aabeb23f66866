// The options of the project's scripts (`npm run bench`, `db`, `seed`, `token`): one way to read
// them, so that every script answers `--help` with its usage and a wrong option with the usage
// and exit code 2, never a stack trace.
import { parseArgs, type ParseArgsConfig } from 'node:util'

type OptionsConfig = NonNullable<ParseArgsConfig['options']>

const HELP = { help: { type: 'boolean', short: 'h', default: false } } as const

/** Prints `message` and the usage on stderr, then exits 2. */
export function usageError (usage: string, message: string): never {
  console.error(`${message}\n\n${usage}`)
  process.exit(2)
}

type Values<T extends OptionsConfig> = ReturnType<typeof parseArgs<{ options: T & typeof HELP }>>['values']

/** The script's options; `--help` prints `usage` and exits 0. */
export function readOptions<const T extends OptionsConfig> (usage: string, options: T): Values<T> {
  let values: Values<T>
  try {
    values = parseArgs({ options: { ...options, ...HELP } }).values as Values<T>
  } catch (error) {
    usageError(usage, (error as Error).message)
  }
  if ((values as { help?: boolean }).help === true) {
    console.log(usage)
    process.exit(0)
  }
  return values
}
