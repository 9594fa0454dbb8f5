/** The app's sections, in navigation order, and the hash route each one lives at. */
export const SECTIONS = [
  { id: 'library', label: 'Library' },
  { id: 'inspector', label: 'Inspector' },
  { id: 'chat', label: 'Chat' },
  { id: 'benchmarks', label: 'Benchmarks' },
  { id: 'export', label: 'Export' },
  { id: 'settings', label: 'Settings' },
] as const;

export type SectionId = (typeof SECTIONS)[number]['id'];
