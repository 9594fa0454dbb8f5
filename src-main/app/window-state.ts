/**
 * The main window's size, position and maximized state, kept in `window-state.json` in the data
 * folder across runs. A saved position is used only while enough of the window's title bar lies
 * on a connected display (a monitor unplugged since then leaves it nowhere to be grabbed);
 * otherwise the window opens at its default size, centred.
 */
import { readFileSync } from 'node:fs';
import type { BrowserWindow, Rectangle } from 'electron';
import { writeAtomically } from '../node/atomic-write';

export interface WindowState {
  /** Absent: let the window manager centre the window. */
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

export const DEFAULT_WINDOW_STATE: WindowState = { width: 1200, height: 800, maximized: false };
export const MIN_WINDOW_SIZE = { width: 720, height: 480 };

/** How much of the top edge must be on a display for the user to reach the title bar and drag it back. */
const TITLE_BAR = { height: 32, minVisibleWidth: 100, minVisibleHeight: 16 };

/** Waiting this long after the last move or resize before writing spares the disk while the user drags. */
const SAVE_DELAY_MS = 500;

/** The saved state in `json`, or null when it is not one (a missing field, a wrong type). */
export function parseWindowState(json: unknown): WindowState | null {
  if (typeof json !== 'object' || json === null) return null;
  const { x, y, width, height, maximized } = json as Record<string, unknown>;
  const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
  if (!isInt(x) || !isInt(y) || !isInt(width) || !isInt(height) || typeof maximized !== 'boolean') return null;
  return { x, y, width, height, maximized };
}

/** Reads the state file; null when it is missing or unreadable (the window then opens at its default). */
export function readWindowState(file: string): WindowState | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    return parseWindowState(JSON.parse(text));
  } catch {
    console.error(`gufo: ${file} is not valid JSON; the window opens at its default size`);
    return null;
  }
}

/** `saved` when its title bar is reachable on one of the displays' work areas, else the centred default. */
export function placeWindow(saved: WindowState | null, workAreas: readonly Rectangle[]): WindowState {
  if (!saved || saved.x === undefined || saved.y === undefined) return { ...DEFAULT_WINDOW_STATE };
  const titleBar = { x: saved.x, y: saved.y, width: saved.width, height: TITLE_BAR.height };
  const reachable = workAreas.some((area) => {
    const overlap = intersection(titleBar, area);
    return overlap.width >= TITLE_BAR.minVisibleWidth && overlap.height >= TITLE_BAR.minVisibleHeight;
  });
  if (!reachable) return { ...DEFAULT_WINDOW_STATE, maximized: saved.maximized };
  return {
    ...saved,
    width: Math.max(saved.width, MIN_WINDOW_SIZE.width),
    height: Math.max(saved.height, MIN_WINDOW_SIZE.height),
  };
}

function intersection(a: Rectangle, b: Rectangle): { width: number; height: number } {
  return {
    width: Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)),
    height: Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)),
  };
}

/** The part of BrowserWindow the keeper watches. */
export type TrackedWindow = Pick<BrowserWindow, 'on' | 'getNormalBounds' | 'isMaximized'>;

/**
 * Saves a window's state to `file`: after moves and resizes settle, and at once when it closes.
 * Each write replaces the file atomically; writes never overlap.
 */
export class WindowStateKeeper {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly delayMs = SAVE_DELAY_MS,
  ) {}

  track(win: TrackedWindow): void {
    const later = () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.#save(win), this.delayMs);
    };
    win.on('move', later);
    win.on('resize', later);
    win.on('maximize', later);
    win.on('unmaximize', later);
    win.on('close', () => this.#save(win));
  }

  /** Resolves once every write asked for so far is on disk (the app waits for it before quitting). */
  flush(): Promise<void> {
    return this.#writing;
  }

  #save(win: TrackedWindow): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // The normal bounds, so a maximized window comes back maximized over the size it had before.
    const state: WindowState = { ...win.getNormalBounds(), maximized: win.isMaximized() };
    const bytes = new TextEncoder().encode(`${JSON.stringify(state)}\n`);
    this.#writing = this.#writing
      .then(() => writeAtomically(this.file, (put) => put(bytes)))
      .catch((err: unknown) => console.error(`gufo: could not save the window state to ${this.file}:`, err));
  }
}
