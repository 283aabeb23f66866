// Running one shell example in a fresh bash against a started service, with curl wrapped so that
// each answer and exit status is recorded (shell-examples.test.ts asserts what they must be).
import { spawn } from 'node:child_process'
import { DOCS_ORIGIN, type Example } from './doc-examples.js'

const CURL_MAX_TIME_S = 5
const EXAMPLE_S = 8
const ENDLESS_AFTER_OUTPUT_MS = 250
const ENDLESS_S = 6
export const CONCURRENCY = 8

// ---------------------------------------------------------------------------------------------
// Running an example

/**
 * Wraps curl: a bound of its own, each transfer's answer and exit status on stderr (a doc's own
 * -w still prints, after ours), and, for an endless example, -v: the status of a stream that is
 * cut before it ends is read from its headers.
 */
const PRELUDE = String.raw`set -u
curl () {
  local args=() theirs=''
  while [ $# -gt 0 ]; do
    case $1 in
      -w|--write-out) theirs=$2; shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  printf '@@start\n' >&2
  command curl -q --max-time "$EXAMPLE_CURL_MAX_TIME" ${'$'}{EXAMPLE_VERBOSE:+-v} "${'$'}{args[@]}" \
    --write-out "%{stderr}@@answer %{http_code} %{url_effective} %{content_type}\n%{stdout}$theirs"
  local status=$?
  printf '@@exit %s\n' "$status" >&2
  return "$status"
}
`

/** One curl: its exit status (null: stopped by this test) and answer (status null: none). */
export interface Answer { exit: number | null, status: number | null, url: string, type: string }
export interface Outcome {
  exit: number | null
  stdout: string
  stderr: string
  answers: Answer[]
  ms: number
  cut: boolean
}

function answers (stderr: string): Answer[] {
  const result: Answer[] = []
  let current: { status: number | null, url: string, type: string, host: string, path: string } | undefined
  const finish = (exit: number | null): void => {
    if (current === undefined) return
    const { status, url, type, host, path } = current
    result.push({
      exit, status: status === 0 ? null : status, url: url !== '' || path === '' ? url : `http://${host}${path}`, type
    })
    current = undefined
  }
  for (const line of stderr.split('\n').map((text) => text.trimEnd())) {
    if (line === '@@start') {
      finish(null)
      current = { status: null, url: '', type: '', host: '', path: '' }
      continue
    }
    if (current === undefined) continue
    const exit = /^@@exit (\d+)$/.exec(line)
    if (exit !== null) {
      finish(Number(exit[1]))
      continue
    }
    const answer = /^@@answer (\d{3}) (\S*) ?(.*)$/.exec(line)
    if (answer !== null) Object.assign(current, { status: Number(answer[1]), url: answer[2], type: answer[3] })
    // What -v shows as it comes (endless examples only).
    const status = /^< HTTP\/[\d.]+ (\d{3})/.exec(line)
    if (status !== null) current.status = Number(status[1])
    const type = /^< content-type: *(.*)$/i.exec(line)
    if (type !== null) current.type = type[1] as string
    const request = /^> [A-Z]+ (\S+) HTTP/.exec(line)
    if (request !== null) current.path = request[1] as string
    const host = /^> host: *(\S+)/i.exec(line)
    if (host !== null) current.host = host[1] as string
  }
  finish(null)
  return result
}

/**
 * Runs an example in `cwd`. An endless one is stopped ENDLESS_AFTER_OUTPUT_MS after its output
 * shows what `shown` waits for (a line, unless told), or, when `done` is given, as soon as `done`
 * says that what the test waits for has happened (looked at every 20 ms, within the example's time).
 */
export async function run (
  example: Example, origin: string, cwd: string, shown = (stdout: string): boolean => stdout.includes('\n'),
  done?: (stdout: string) => boolean
): Promise<Outcome> {
  const script = [PRELUDE, ...example.setup, example.text].join('\n').replace(DOCS_ORIGIN, origin)
  const seconds = example.endless ? ENDLESS_S : EXAMPLE_S
  const started = Date.now()
  // `timeout` ends the whole process group (bash, curl, jq), even
  // if this process dies; the kill below is the last resort.
  const child = spawn('timeout', ['-k', '1', String(seconds), 'bash', '--noprofile', '--norc', '-c', script], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      HOME: cwd,
      EXAMPLE_CURL_MAX_TIME: String(CURL_MAX_TIME_S),
      EXAMPLE_VERBOSE: example.endless ? '1' : ''
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  let cut = false
  let stopping: NodeJS.Timeout | undefined
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    // An endless example has shown that it works once it prints a line:
    // stopped shortly after (timeout passes SIGTERM on to the group).
    if (example.endless && stopping === undefined && shown(stdout)) {
      stopping = setTimeout(() => { cut = true; child.kill('SIGTERM') }, ENDLESS_AFTER_OUTPUT_MS)
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const watching = done === undefined || !example.endless
    ? undefined
    : setInterval(() => {
      if (!cut && done(stdout)) {
        cut = true
        child.kill('SIGTERM')
      }
    }, 20)
  const kill = setTimeout(() => child.kill('SIGKILL'), (seconds + 3) * 1000)
  const exit = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  clearTimeout(kill)
  clearTimeout(stopping)
  clearInterval(watching)
  return {
    exit,
    stdout,
    stderr,
    answers: answers(stderr),
    ms: Date.now() - started,
    cut: cut || (example.endless && exit === 124)
  }
}

export async function pool<T, R> (list: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(list.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(size, list.length) }, async () => {
    while (next < list.length) {
      const index = next++
      results[index] = await work(list[index] as T)
    }
  }))
  return results
}
