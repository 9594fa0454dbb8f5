// Read by both the Vite plugin and svelte-check.
export default {
  compilerOptions: {
    // Svelte 5 runes everywhere, no legacy component syntax.
    runes: true,
  },
};
