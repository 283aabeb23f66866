// One document of each list as the service answers it, for the 200 example of the OpenAPI
// document (Swagger UI shows it): the demo data's first document of the kind, written by the
// service itself. test/plugins/openapi.test.ts checks that each is still the service's answer to
// `filter={"_id":…}` on the demo data, so that an example cannot drift from what is sent.

export const LIST_EXAMPLES: Record<string, Record<string, unknown>> = {
  projects: {
    _id: '65cd7e3007370d3300000000',
    name: 'Festival des Lumières 2024',
    email: 'contact@lumieres.example.org',
    createdAt: '2024-02-15T03:00:00.000Z',
    updatedAt: '2024-02-22T03:00:00.000Z',
    customFields: { city: 'Lyon', edition: 12 },
    public: true
  },
  activities: {
    _id: '65d9be203ace873200000045',
    name: 'Foraging walk',
    createdAt: '2024-02-24T10:00:00.000Z',
    updatedAt: '2024-03-02T10:00:00.000Z',
    customFields: { level: 'beginner', durationMinutes: 90 },
    project: '65cd7e3007370d3300000000',
    category: '65cde0a0566d3e8600000002',
    tags: ['food', 'dance'],
    active: false,
    description: 'Find edible plants with a botanist.'
  },
  categories: {
    _id: '65cd9a50d397b68500000001',
    name: 'Music',
    createdAt: '2024-02-15T05:00:00.000Z',
    updatedAt: '2024-03-16T05:00:00.000Z',
    customFields: { color: 'green' },
    project: '65cd7e3007370d3300000000'
  },
  places: {
    _id: '65cf94900ff0f39700000009',
    name: 'Big top 1',
    createdAt: '2024-02-16T17:00:00.000Z',
    updatedAt: '2024-02-17T17:00:00.000Z',
    customFields: { indoor: false },
    project: '65cd7e3007370d3300000000',
    maxNumberOfParticipants: 80
  },
  sessions: {
    _id: '65e5636029e281ee00000081',
    name: 'Poetry slam – 06-16',
    createdAt: '2024-03-04T06:00:00.000Z',
    project: '65cd7e3007370d3300000000',
    activity: '65da3cb0a2b4548d00000048',
    start: '2024-06-16T16:30:00.000Z',
    end: '2024-06-16T17:15:00.000Z',
    places: ['65d0add0dae155f40000000f'],
    stewards: ['65d504c0122c2a110000002b', '65d6d4d05c713fdf00000037']
  },
  stewards: {
    _id: '65d2b620de73653c0000001d',
    name: 'Inès Dubois',
    email: 'inès.dubois37@example.org',
    createdAt: '2024-02-19T02:00:00.000Z',
    updatedAt: '2024-03-07T02:00:00.000Z',
    customFields: { shirtSize: 'M' },
    project: '65cd7e3007370d3300000000'
  },
  teams: {
    _id: '6622167036253e8d000001ad',
    name: 'Team 1',
    createdAt: '2024-04-19T07:00:00.000Z',
    customFields: { radioChannel: 2 },
    project: '65cd7e3007370d3300000000',
    activity: '65e43c10d3a8e60300000079'
  },
  registrations: {
    _id: '66242cd03e7f16b9000004d7',
    name: 'Olga Leroy',
    email: 'olga.leroy91@example.org',
    createdAt: '2024-04-20T21:00:00.000Z',
    updatedAt: '2024-05-07T21:00:00.000Z',
    customFields: { ticket: 'weekend', newsletter: true },
    project: '65cd7e3007370d3300000000',
    user: '66241ec04c0548ab000001b7',
    role: 'participant',
    sessionsSubscriptions: [
      { session: '6608d1b01b51d6e90000012a', subscribedAt: '2024-04-28T17:15:00.000Z' },
      { session: '66164700164f09670000016d', subscribedAt: '2024-05-17T16:30:00.000Z' },
      { session: '66095e50be1640ff0000012d', subscribedAt: '2024-05-25T15:00:00.000Z' },
      { session: '661b0060a832445400000187', subscribedAt: '2024-05-25T14:00:00.000Z' },
      { session: '66030d2022354c9d00000110', subscribedAt: '2024-05-04T20:00:00.000Z' }
    ]
  }
}
