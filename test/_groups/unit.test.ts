import { runGroup } from './groups.js'

runGroup(import.meta.filename)
