import type { MenuItemConstructorOptions } from 'electron';
import { describe, expect, it, vi } from 'vitest';
import { menuTemplate, type MenuActions } from '../../src-main/app/menu';

function actions() {
  return { addModels: vi.fn(), addFolder: vi.fn(), openDataFolder: vi.fn(), about: vi.fn() } satisfies MenuActions;
}

/** Each menu as "Label: item, item, …" (roles for standard items, --- for separators). */
function outline(template: MenuItemConstructorOptions[]): string[] {
  return template.map((menu) => {
    const items = (menu.submenu as MenuItemConstructorOptions[]).map((i) =>
      i.type === 'separator' ? '---' : (i.label ?? i.role),
    );
    return `${menu.label ?? menu.role}: ${items.join(', ')}`;
  });
}

const find = (template: MenuItemConstructorOptions[], label: string) =>
  template.flatMap((m) => m.submenu as MenuItemConstructorOptions[]).filter((i) => i.label === label);

describe('menuTemplate', () => {
  it('on Windows and Linux: File ends with Quit, About is under Help, developer items in development', () => {
    for (const platform of ['linux', 'win32'] as const) {
      expect(outline(menuTemplate({ platform, packaged: false, actions: actions() }))).toEqual([
        'File: Add Models…, Add Folder…, ---, Open Data Folder, ---, quit',
        'Edit: undo, redo, ---, cut, copy, paste, delete, ---, selectAll',
        'View: reload, forceReload, toggleDevTools, ---, resetZoom, zoomIn, zoomOut, ---, togglefullscreen',
        'windowMenu: minimize, close',
        'help: About Gufo, ---, Open Data Folder',
      ]);
    }
  });

  it('on macOS: the app menu first, with About and Quit', () => {
    expect(outline(menuTemplate({ platform: 'darwin', packaged: true, actions: actions() }))).toEqual([
      'Gufo: About Gufo, ---, services, ---, hide, hideOthers, unhide, ---, quit',
      'File: Add Models…, Add Folder…, ---, Open Data Folder, ---, close',
      'Edit: undo, redo, ---, cut, copy, paste, pasteAndMatchStyle, delete, ---, selectAll',
      'View: resetZoom, zoomIn, zoomOut, ---, togglefullscreen',
      'windowMenu: minimize, zoom, ---, front',
      'help: Open Data Folder',
    ]);
  });

  it('leaves reload and the developer tools out of a packaged app', () => {
    const view = menuTemplate({ platform: 'linux', packaged: true, actions: actions() }).find(
      (m) => m.label === 'View',
    )!;
    expect((view.submenu as MenuItemConstructorOptions[]).map((i) => i.role)).not.toContain('toggleDevTools');
    expect((view.submenu as MenuItemConstructorOptions[]).map((i) => i.role)).not.toContain('reload');
  });

  it("calls Gufo's own actions, with the usual shortcuts", () => {
    const a = actions();
    const template = menuTemplate({ platform: 'linux', packaged: true, actions: a });
    const [addModels] = find(template, 'Add Models…');
    const [addFolder] = find(template, 'Add Folder…');
    expect([addModels!.accelerator, addFolder!.accelerator]).toEqual(['CmdOrCtrl+O', 'CmdOrCtrl+Shift+O']);
    for (const item of [addModels, addFolder, ...find(template, 'Open Data Folder'), ...find(template, 'About Gufo')])
      (item!.click as () => void)();
    expect(a.addModels).toHaveBeenCalledTimes(1);
    expect(a.addFolder).toHaveBeenCalledTimes(1);
    expect(a.openDataFolder).toHaveBeenCalledTimes(2);
    expect(a.about).toHaveBeenCalledTimes(1);
  });
});
