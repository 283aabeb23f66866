// A route's hooks of one kind as an array: route options hold none, one, or an array of them.
export function routeHooks<H> (hooks: H | H[] | undefined): H[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
}
