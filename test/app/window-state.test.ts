import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_WINDOW_STATE,
  parseWindowState,
  placeWindow,
  readWindowState,
  WindowStateKeeper,
} from '../../src-main/app/window-state';
import { tempDir } from '../support/temp';

const laptop = { x: 0, y: 0, width: 1440, height: 875 };
/** A second monitor to the laptop's left. */
const leftMonitor = { x: -1920, y: -200, width: 1920, height: 1040 };

describe('placeWindow', () => {
  const saved = { x: 200, y: 100, width: 1000, height: 700, maximized: false };

  it('keeps a saved window that is on a display', () => {
    expect(placeWindow(saved, [laptop])).toEqual(saved);
    const onLeft = { ...saved, x: -1500, y: -100 };
    expect(placeWindow(onLeft, [laptop, leftMonitor])).toEqual(onLeft);
  });

  it('centres the default size when the display it was on is gone', () => {
    expect(placeWindow({ ...saved, x: -1500, y: -100 }, [laptop])).toEqual(DEFAULT_WINDOW_STATE);
    expect(placeWindow({ ...saved, x: 5000, y: 100 }, [laptop])).toEqual(DEFAULT_WINDOW_STATE);
    expect(placeWindow({ ...saved, x: 100, y: 2000 }, [laptop])).toEqual(DEFAULT_WINDOW_STATE);
    expect(placeWindow({ ...saved, x: 0, y: 0, maximized: true }, [])).toEqual({
      ...DEFAULT_WINDOW_STATE,
      maximized: true,
    });
  });

  it('needs the title bar reachable, not just a corner of the window', () => {
    // Only the bottom 50 px of the window are on the laptop: its title bar is above every display.
    expect(placeWindow({ ...saved, x: 100, y: -650 }, [laptop])).toEqual(DEFAULT_WINDOW_STATE);
    // A sliver of 40 px at the right edge: too little to grab.
    expect(placeWindow({ ...saved, x: 1400 }, [laptop])).toEqual(DEFAULT_WINDOW_STATE);
    expect(placeWindow({ ...saved, x: 1300 }, [laptop])).toEqual({ ...saved, x: 1300 });
  });

  it('grows a window saved smaller than the minimum', () => {
    expect(placeWindow({ ...saved, width: 300, height: 100 }, [laptop])).toEqual({ ...saved, width: 720, height: 480 });
  });

  it('centres the default size the first time', () => {
    expect(placeWindow(null, [laptop])).toEqual({ width: 1200, height: 800, maximized: false });
  });
});

describe('parseWindowState / readWindowState', () => {
  it('reads what was saved', () => {
    const file = join(tempDir(), 'window-state.json');
    writeFileSync(file, '{"x":-8,"y":-8,"width":1936,"height":1056,"maximized":true}');
    expect(readWindowState(file)).toEqual({ x: -8, y: -8, width: 1936, height: 1056, maximized: true });
  });

  it.each([
    null,
    3,
    [],
    {},
    { x: 1, y: 2, width: 800, height: 600 },
    { x: '1', y: 2, width: 800, height: 600, maximized: false },
    { x: 1.5, y: 2, width: 800, height: 600, maximized: false },
  ])('refuses %j', (json) => expect(parseWindowState(json)).toBeNull());

  it('answers null for a missing or garbled file, saying so for the latter', () => {
    const dir = tempDir();
    expect(readWindowState(join(dir, 'none.json'))).toBeNull();
    writeFileSync(join(dir, 'bad.json'), '{"x": 1,');
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(readWindowState(join(dir, 'bad.json'))).toBeNull();
    expect(error).toHaveBeenCalledWith(expect.stringContaining(`${join(dir, 'bad.json')} is not valid JSON`));
    error.mockRestore();
  });
});

describe('WindowStateKeeper', () => {
  class Win extends EventEmitter {
    bounds = { x: 1, y: 2, width: 800, height: 600 };
    maximized = false;
    getNormalBounds = () => ({ ...this.bounds });
    isMaximized = () => this.maximized;
  }

  it('writes once moves settle, through a temporary file renamed into place', async () => {
    const dir = tempDir();
    const file = join(dir, 'window-state.json');
    const keeper = new WindowStateKeeper(file, 50);
    const win = new Win();
    keeper.track(win as never);
    for (let x = 0; x < 5; x++) {
      win.bounds.x = x;
      win.emit('move');
    }
    win.maximized = true;
    win.emit('maximize');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readdirSync(dir)).toEqual([]);
    // Written once the moves settle: waited for as long as a busy machine needs (vi.waitFor gives up after 1 s by default).
    await vi.waitFor(() => expect(readdirSync(dir)).toEqual(['window-state.json']), { timeout: 30_000 });
    await keeper.flush();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ x: 4, y: 2, width: 800, height: 600, maximized: true });
  });

  it('writes at once on close, and flush waits for it', async () => {
    const file = join(tempDir(), 'window-state.json');
    const keeper = new WindowStateKeeper(file, 60_000);
    const win = new Win();
    keeper.track(win as never);
    win.emit('resize');
    win.bounds.width = 1024;
    win.emit('close');
    await keeper.flush();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ x: 1, y: 2, width: 1024, height: 600, maximized: false });
  });

  it('reports a failed write without throwing', async () => {
    const keeper = new WindowStateKeeper(join(tempDir(), 'missing-dir', 'window-state.json'), 0);
    const win = new Win();
    keeper.track(win as never);
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    win.emit('close');
    await keeper.flush();
    expect(error).toHaveBeenCalledWith(expect.stringContaining('could not save the window state'), expect.anything());
    error.mockRestore();
  });
});
