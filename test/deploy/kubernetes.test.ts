// deploy/kubernetes: every manifest, as the base and as the example overlay renders it, is
// validated against the Kubernetes OpenAPI schemas (kubernetes-models), and holds the facts
// the service needs: probes on /ready and /health, a grace period above the drain, non-root,
// read-only root filesystem, the metrics port, the Secret for MONGODB_URI and the keys.
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { parseAllDocuments } from 'yaml'

type Manifest = Record<string, any>

const DIR = path.join(import.meta.dirname, '..', '..', 'deploy', 'kubernetes')

async function load (file: string): Promise<Manifest[]> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'))
  for (const doc of docs) if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`)
  return docs.map((doc) => doc.toJS() as Manifest)
}

/** The kubernetes-models class for an apiVersion and kind, which validates against the OpenAPI schema. */
async function modelOf ({ apiVersion, kind }: Manifest): Promise<new (data: Manifest) => { validate: () => void }> {
  const module = await import(`kubernetes-models/${apiVersion as string}/${kind as string}`)
  return module[kind] ?? module.default
}

async function validate (manifest: Manifest): Promise<void> {
  const Model = await modelOf(manifest)
  new Model(manifest).validate()
}

/** Merges a strategic-merge patch: objects deeply, lists of named items by name, anything else replaced. */
function merge (base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((item) => typeof item?.name === 'string')) {
    const out = base.map((item) => ({ ...item }))
    for (const item of patch) {
      const i = out.findIndex((existing) => existing.name === item.name)
      if (i < 0) out.push(item)
      else out[i] = merge(out[i], item)
    }
    return out
  }
  if (typeof base === 'object' && base !== null && !Array.isArray(base) &&
    typeof patch === 'object' && patch !== null && !Array.isArray(patch)) {
    const out: Manifest = { ...base }
    for (const [key, value] of Object.entries(patch)) out[key] = key in out ? merge(out[key], value) : value
    return out
  }
  return patch
}

/** `kustomize build`, for what our kustomizations use: resources, namespace, images, patches, labels. */
async function build (dir: string): Promise<Manifest[]> {
  const [kustomization] = await load(path.join(dir, 'kustomization.yaml')) as [Manifest]
  let out: Manifest[] = []
  for (const resource of kustomization.resources ?? []) {
    const at = path.join(dir, resource)
    out.push(...(resource.endsWith('.yaml') ? await load(at) : await build(at)))
  }
  for (const { path: file } of kustomization.patches ?? []) {
    for (const patch of await load(path.join(dir, file))) {
      const i = out.findIndex((m) => m.kind === patch.kind && m.metadata.name === patch.metadata.name)
      if (i < 0) throw new Error(`${file} patches ${patch.kind}/${patch.metadata.name}, which no resource defines`)
      out[i] = merge(out[i], patch) as Manifest
    }
  }
  for (const { pairs } of kustomization.labels ?? []) {
    out = out.map((m) => ({ ...m, metadata: { ...m.metadata, labels: { ...m.metadata.labels, ...pairs } } }))
  }
  for (const image of kustomization.images ?? []) {
    for (const m of out) {
      for (const container of m.spec?.template?.spec?.containers ?? []) {
        if ((container.image as string).split(':')[0] === image.name) {
          container.image = `${image.newName ?? image.name}:${image.newTag}`
        }
      }
    }
  }
  if (kustomization.namespace !== undefined) {
    out = out.map((m) => m.kind === 'Namespace'
      ? m
      : { ...m, metadata: { ...m.metadata, namespace: kustomization.namespace } })
  }
  return out
}

const files = (await readdir(DIR, { recursive: true })).filter((file) => file.endsWith('.yaml'))
const base = await build(path.join(DIR, 'base'))
const overlay = await build(path.join(DIR, 'overlays', 'example'))

t.test('every resource file of the base validates against its OpenAPI schema', async (t) => {
  const resources = files.filter((file) => file.startsWith('base/') && !file.endsWith('kustomization.yaml'))
  t.ok(resources.length >= 5)
  for (const file of resources) {
    for (const manifest of await load(path.join(DIR, file))) {
      await t.resolves(validate(manifest), `${file}: ${manifest.kind}`)
    }
  }
})

t.test('the base and the example overlay, rendered, validate', async (t) => {
  for (const [name, rendered] of [['base', base], ['overlay', overlay]] as const) {
    t.same(rendered.map((m) => m.kind).sort(), [
      ...(name === 'overlay' ? ['Namespace'] : []), 'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler',
      'PodDisruptionBudget', 'Service'
    ].sort(), `${name}: every resource`)
    for (const manifest of rendered) await t.resolves(validate(manifest), `${name}: ${manifest.kind}`)
  }
  const deployment = overlay.find((m) => m.kind === 'Deployment') as Manifest
  t.equal(deployment.metadata.namespace, 'listing')
  t.equal(deployment.spec.replicas, 3, 'the overlay patch applied')
  t.equal(deployment.spec.template.spec.containers[0].image, 'registry.example.org/listing-api:0.1.0')
})

t.test('control: a broken manifest fails the validation', async (t) => {
  const deployment = base.find((m) => m.kind === 'Deployment') as Manifest
  const broken = [
    merge(deployment, { spec: { replicas: 'two' } }),
    merge(deployment, {
      spec: {
        template: { spec: { containers: [{ name: 'listing-api', ports: [{ name: 'http', containerPort: 'web' }] }] } }
      }
    }),
    { ...deployment, spec: { ...deployment.spec, selector: undefined } }
  ]
  for (const manifest of broken) await t.rejects(validate(manifest as Manifest))
})

t.test('the Deployment fits the service: probes, drain, hardening, metrics, settings', async (t) => {
  const deployment = base.find((m) => m.kind === 'Deployment') as Manifest
  const config = (base.find((m) => m.kind === 'ConfigMap') as Manifest).data
  const pod = deployment.spec.template.spec
  const [container] = pod.containers
  t.equal(container.readinessProbe.httpGet.path, '/ready')
  t.equal(container.livenessProbe.httpGet.path, '/health')
  t.equal(container.startupProbe.httpGet.path, '/health')
  t.ok(container.readinessProbe.timeoutSeconds <= 2,
    'a short readiness probe: /ready answers at once from what the service knows')
  t.ok(container.readinessProbe.timeoutSeconds * 1000 < Number(config.QUERY_TIMEOUT_MS),
    'shorter than a query: the probe learns of a silent database, it does not wait on it')
  // process/service.ts: serving SHUTDOWN_DELAY_MS more, then in-flight requests (QUERY_TIMEOUT_MS), then 4 s to close.
  const drainSeconds = (Number(config.SHUTDOWN_DELAY_MS) + Number(config.QUERY_TIMEOUT_MS) + 4000) / 1000
  t.ok(pod.terminationGracePeriodSeconds > drainSeconds,
    `grace ${pod.terminationGracePeriodSeconds} s > drain ${drainSeconds} s`)
  t.equal(pod.securityContext.runAsNonRoot, true)
  t.equal(container.securityContext.readOnlyRootFilesystem, true)
  t.equal(container.securityContext.allowPrivilegeEscalation, false)
  t.same(container.securityContext.capabilities.drop, ['ALL'])
  t.ok(container.resources.requests.cpu !== undefined && container.resources.limits.memory !== undefined)
  const metrics = container.ports.find((p: Manifest) => p.name === 'metrics')
  t.equal(String(metrics.containerPort), config.METRICS_PORT, 'the metrics port is named and matches METRICS_PORT')
  t.same(container.envFrom.map((from: Manifest) => from.secretRef?.name ?? from.configMapRef?.name),
    ['listing-api', 'listing-api-secrets'])
  t.notOk('MONGODB_URI' in config || 'CURSOR_SECRET' in config, 'secrets are not in the ConfigMap')
  const { ConfigSchema } = await import('../../schemas/config.js')
  for (const key of Object.keys(config)) t.ok(key in ConfigSchema.properties, `${key} is a setting the service reads`)
  const hpa = base.find((m) => m.kind === 'HorizontalPodAutoscaler') as Manifest
  t.equal(hpa.spec.metrics[0].resource.name, 'cpu')
  const service = base.find((m) => m.kind === 'Service') as Manifest
  t.same(service.spec.selector, deployment.spec.selector.matchLabels, 'the Service selects the pods')
})
