// Work done once at start, after the first ping and the pool's warm-up (the change feeds' check
// of the deployment and of their collections): /ready says the service is starting until it ends.

export class StartUpWork {
  private readonly work: Array<() => Promise<unknown>> = []
  /** Whether every piece of work has ended, however it ended. */
  done = false
  private finish = (): void => {}
  /** Resolves once the work of the first start has ended. */
  readonly ended = new Promise<void>((resolve) => { this.finish = resolve })

  /** Adds work, each bounded by its own deadline (Database#bounded), before the service starts. */
  add (work: () => Promise<unknown>): void {
    this.work.push(work)
  }

  /** Runs the pieces side by side; resolves once every one has ended, however. */
  async run (): Promise<void> {
    this.done = false
    await Promise.allSettled(this.work.map(async (work) => await work()))
    this.done = true
    this.finish()
  }
}
