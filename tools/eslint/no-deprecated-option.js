// A deprecated property written in an options object passed to an optional parameter
// (`db.command(cmd, { timeoutMS })`): typescript-eslint's no-deprecated looks the key up on the
// literal's contextual type, which is then `Options | undefined`, a union without the property,
// and lets it pass (typescript-eslint/typescript-eslint#10643). This looks it up on the type
// without `undefined`; every other object literal is the stock rule's.

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'Disallow deprecated properties in options objects passed to optional parameters' },
    messages: { deprecated: '`{{name}}` is deprecated. {{reason}}' },
    schema: []
  },
  create (context) {
    const services = context.sourceCode.parserServices
    if (services?.program == null) return {}
    const checker = services.program.getTypeChecker()
    return {
      'ObjectExpression > Property' (node) {
        if (node.computed || node.key.type !== 'Identifier') return
        const contextual = checker.getContextualType(services.esTreeNodeToTSNodeMap.get(node.parent))
        if (contextual === undefined || !contextual.isUnion()) return
        const defined = checker.getNonNullableType(contextual)
        if (defined === contextual) return
        const tag = defined.getProperty(node.key.name)?.getJsDocTags(checker)
          .find((found) => found.name === 'deprecated')
        if (tag === undefined) return
        const reason = (tag.text ?? []).map((part) => part.text).join('')
        context.report({ node: node.key, messageId: 'deprecated', data: { name: node.key.name, reason } })
      }
    }
  }
}
