/** The colour theme: the user's setting, applied as `data-theme` on <html> (global.css reads it). */
import type { GufoBridge, Theme } from '../../src-preload/api';

export function applyTheme(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** Applies the saved theme now and whenever the settings change. */
export function followThemeSetting(gufo: GufoBridge): void {
  void gufo.getSettings().then(
    (settings) => applyTheme(settings.theme),
    () => {},
  );
  gufo.onEvent((event) => {
    if (event.type === 'settings-changed') applyTheme(event.settings.theme);
  });
}
