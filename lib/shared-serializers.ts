// Fastify compiles a serializer (fast-json-stringify) for every response schema of every route,
// at start. The service's routes share most of theirs: the same problem+json schema for 404, 500
// and 503 on every list, each route's own copy. Fastify's own compiler factory, with each
// distinct schema compiled once per set of shared schemas: the same serializers, fewer compiled.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type SerializerFactory = ReturnType<typeof SerializerSelector>

/** Fastify's stock serializer factory, with a schema's serializer reused for an identical schema (the same JSON). */
export function sharedSerializers (): SerializerFactory {
  const stock = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = stock(externalSchemas, options)
    // Per call of the factory: Fastify makes one compiler per set of shared schemas.
    const compiled = new Map<string, ReturnType<typeof compile>>()
    return (route) => {
      const key = JSON.stringify(route.schema)
      let serializer = compiled.get(key)
      if (serializer === undefined) {
        serializer = compile(route)
        compiled.set(key, serializer)
      }
      return serializer
    }
  }
}
