// Running one shell example in a fresh bash against a started service, with curl wrapped so that
// each answer and exit status is recorded (shell-examples.test.ts asserts what they must be).
import { spawn } from 'node:child_process'
import { DOCS_ORIGIN, type Example } from './doc-examples.js'

const CURL_MAX_TIME_S = 5
/**
 * A curl that reaches CURL_MAX_TIME_S fails its example (exit 28): this bound only ends a script
 * that never ends (a loop that does not stop), with room for a paging loop's six requests while
 * eight examples run at once beside the rest of the suite.
 */
const EXAMPLE_S = 30
/** An endless example is stopped once what the test looks at has arrived, or after this long at most. */
const ENDLESS_S = 6
/** How often an endless example is looked at besides its output's arrival (what `done` waits for may be a file). */
const LOOK_EVERY_MS = 20
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
 * Whether the answers an endless example's curls have had can be judged: one answered, and none
 * is in the middle of its head (curl -v shows the status line, then the headers, up to a lone
 * `<`): a stream's status and content type have come. A curl still waiting for its first byte (a
 * long poll) is the one that will be stopped. Complete lines only.
 */
function answersArrived (stderr: string): boolean {
  let answered = false
  let inHead = false
  for (const line of stderr.slice(0, stderr.lastIndexOf('\n') + 1).split('\n').map((text) => text.trimEnd())) {
    const status = /^< HTTP\/[\d.]+ \d{3}/.test(line)
    if (status || line.startsWith('@@answer ')) answered = true
    if (status) inHead = true
    else if (line === '@@start' || line === '<' || line.startsWith('@@answer ')) inHead = false
  }
  return answered && !inHead
}

/**
 * Runs an example in `cwd`. An endless one is stopped as soon as what the test looks at has
 * arrived, looked at as its output comes and every LOOK_EVERY_MS: by default, output that
 * `shown` accepts (a complete line, unless told) holding what the doc says it prints, and the
 * answers so far (answersArrived); when `done` is given, what `done` waits for. If that has not
 * come within ENDLESS_S, `timeout` ends the example, and the test sees what is missing.
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
  const arrived = (): boolean => done !== undefined
    ? done(stdout)
    : shown(stdout) && (example.prints === undefined || stdout.includes(example.prints)) && answersArrived(stderr)
  // Stopped once it has (timeout passes SIGTERM on to the group).
  const look = (): void => {
    if (!example.endless || cut || !arrived()) return
    cut = true
    child.kill('SIGTERM')
  }
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; look() })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; look() })
  const watching = example.endless ? setInterval(look, LOOK_EVERY_MS) : undefined
  const kill = setTimeout(() => child.kill('SIGKILL'), (seconds + 3) * 1000)
  const exit = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  clearTimeout(kill)
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
