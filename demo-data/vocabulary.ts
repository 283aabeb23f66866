export const PROJECTS = [
  {
    name: 'Festival des Lumières 2024',
    slug: 'lumieres',
    city: 'Lyon',
    edition: 12,
    year: 2024,
    month: 6,
    day: 14,
    days: 4,
    public: true
  },
  {
    name: 'Open Air Summer Camp',
    slug: 'summercamp',
    city: 'Utrecht',
    edition: 3,
    year: 2024,
    month: 7,
    day: 20,
    days: 7,
    public: true
  },
  {
    name: 'Staff Retreat (internal)',
    slug: 'retreat',
    city: 'Ghent',
    edition: 1,
    year: 2024,
    month: 9,
    day: 5,
    days: 2,
    public: false
  }
] as const

export const CATEGORIES = [
  'Music', 'Dance', 'Theatre', 'Workshops', 'Food', 'Kids', 'Wellness', 'Talks', 'Cinema', 'Sports', 'Crafts', 'Nature'
]

export const ACTIVITIES: ReadonlyArray<readonly [string, string]> = [
  ['Yoga flow', 'A gentle morning yoga session for every level.'],
  ['Sunrise yoga', 'Salute the sun before the crowds arrive.'],
  ['Salsa initiation', 'Learn the basic steps of salsa with a partner.'],
  ['Jazz jam', 'Bring your instrument and join the open jam.'],
  ['Improv theatre', 'Short improvised scenes built from audience prompts.'],
  ['Pottery workshop', 'Shape and glaze your own cup.'],
  ['Street food tour', 'Taste the stalls with a local guide.'],
  ['Kids circus', 'Juggling, balance and clowning for ages 6–12.'],
  ['Meditation circle', 'Guided breathing and silent sitting.'],
  ['Climate talk', 'Scientists and activists on local climate action.'],
  ['Open-air cinema', 'A classic film under the stars.'],
  ['Drum circle', 'Rhythm for everyone; drums provided.'],
  ['Contemporary dance', 'A performance followed by a short class.'],
  ['Bike repair café', 'Fix your bike with volunteer mechanics.'],
  ['Foraging walk', 'Find edible plants with a botanist.'],
  ['Choir for all', 'Sing in four parts, no experience needed.'],
  ['Poetry slam', 'Three minutes, one microphone, no props.'],
  ['Tango night', 'Milonga with live bandoneón.'],
  ['Beach volleyball', 'Mixed teams, friendly tournament.'],
  ['Woodcraft', 'Carve a spoon from green wood.']
]

export const TAGS = [
  'music', 'dance', 'outdoor', 'indoor', 'family', 'beginner', 'advanced', 'free', 'evening', 'morning', 'food',
  'wellness'
]

export const PLACES = [
  'Main stage', 'Big top', 'Garden', 'Tent', 'Workshop room', 'Beach', 'Forest clearing', 'Chapel', 'Courtyard',
  'Cinema barn'
]

export const FIRST_NAMES = [
  'Ana', 'Bram', 'Chloé', 'Dario', 'Eva', 'Farid', 'Greta', 'Hugo', 'Inès', 'Jonas', 'Kaia', 'Léon', 'Mila', 'Noah',
  'Olga', 'Pablo', 'Quentin', 'Rosa', 'Sami', 'Tess', 'Ugo', 'Vera', 'Wout', 'Yara', 'Zoé'
]

export const LAST_NAMES = [
  'Martin', 'Jansen', 'Dubois', 'Peeters', 'Rossi', 'Müller', 'García', 'Novak', 'Leroy', 'De Vries', 'Costa',
  'Lambert', 'Nowak', 'Moreau', 'Bakker'
]

export const ROLES = ['participant', 'participant', 'participant', 'volunteer', 'artist', 'organiser']
