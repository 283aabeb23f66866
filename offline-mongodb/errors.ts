/** A command failure answered as `{ ok: 0, code, codeName, errmsg, errorLabels? }`, as mongod does. */
export class CommandError extends Error {
  constructor (readonly code: number, readonly codeName: string, message: string, readonly labels?: string[]) {
    super(message)
    this.name = 'CommandError'
  }
}
