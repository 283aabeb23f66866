// What every section of the HTTP benchmark is given (bench/http.ts starts the processes).
import type { MixEntry } from './mix.js'
import type { HttpOptions, Server } from './http-types.js'

export interface SectionContext {
  options: HttpOptions
  /** The service as deployed, the two floors (bench/floor.ts). */
  service: Server
  floor: Server
  rawFloor: Server
  mix: MixEntry[]
  growth: { pageSize: Array<MixEntry & { limit: number }>, inSize: MixEntry[] }
}
