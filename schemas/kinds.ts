// One TypeBox schema per kind (docs/query-language.md, "The lists"). Each declares its fields once; the list
// endpoints, their serializer, their query allowlists and their docs all come from here.
import { Type, type TObject } from '@sinclair/typebox'
import { DateTime, DocumentArray, Ref, RefArray, StringArray, commonFields, projectField } from './fields.js'

const kind = (id: string, description: string, properties: Parameters<typeof Type.Object>[0]): TObject =>
  Type.Object(properties, { $id: id, description, additionalProperties: false })

export const Project = kind('Project', 'A festival or event: the root of every other collection', {
  ...commonFields,
  public: Type.Optional(Type.Boolean({ description: 'Listed on /projects/public' }))
})

export const Activity = kind('Activity', 'Something that happens, in one or more sessions', {
  ...commonFields,
  ...projectField,
  category: Type.Optional(Ref('Its category')),
  tags: Type.Optional(StringArray('Free tags')),
  active: Type.Optional(Type.Boolean({ description: 'Whether it is scheduled' })),
  description: Type.Optional(Type.String({ description: 'Description' }))
})

export const Category = kind('Category', 'A category of activities', { ...commonFields, ...projectField })

export const Place = kind('Place', 'A place (space) where sessions happen', {
  ...commonFields,
  ...projectField,
  maxNumberOfParticipants: Type.Optional(Type.Number({ description: 'Capacity' }))
})

export const Session = kind('Session', 'One occurrence of an activity', {
  ...commonFields,
  ...projectField,
  activity: Type.Optional(Ref('Its activity')),
  start: Type.Optional(DateTime('Start time')),
  end: Type.Optional(DateTime('End time')),
  places: Type.Optional(RefArray('Where it happens')),
  stewards: Type.Optional(RefArray('Who supervises it'))
})

export const Steward = kind('Steward', 'A steward (supervisor)', { ...commonFields, ...projectField })

export const Team = kind('Team', 'A team of stewards for an activity', {
  ...commonFields,
  ...projectField,
  activity: Type.Optional(Ref('Its activity'))
})

export const Registration = kind('Registration', "A person's registration to the project", {
  ...commonFields,
  ...projectField,
  user: Type.Optional(Ref('The registered user')),
  steward: Type.Optional(Ref('The steward, when the person is one')),
  role: Type.Optional(Type.String({ description: 'Role in the project' })),
  sessionsSubscriptions: Type.Optional(DocumentArray({
    session: Type.Optional(Ref('A session subscribed to')),
    subscribedAt: Type.Optional(DateTime('When'))
  }, 'Sessions subscribed to'))
})
