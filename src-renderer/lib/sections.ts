/** The app's sections, in navigation order. Each gets its page in the release that builds it. */
export const SECTIONS = ['Library', 'Inspector', 'Chat', 'Benchmarks', 'Export'] as const;
