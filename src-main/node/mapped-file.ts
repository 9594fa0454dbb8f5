import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ByteSource } from '../core/gguf/byte-source';

type Koffi = typeof import('koffi');
/** koffi, a native addon (about 20 ms to load), loads with the first map: reads without mmap (gufo quantize) never pay for it. */
const loadKoffi = (): Koffi => createRequire(import.meta.url)('koffi') as Koffi;

/**
 * Read-only memory maps through koffi (mmap on Linux/macOS, MapViewOfFile on Windows). Views
 * are ArrayBuffers over the mapped pages: nothing is copied, and only the pages that are touched
 * are read from disk.
 *
 * One ArrayBuffer cannot cover more than 4 GiB, so the file is mapped in overlapping windows of
 * 2 × WINDOW bytes that start every WINDOW bytes: any range up to WINDOW long lies inside one of
 * them. Longer ranges get a mapping of their own. A mapping is released when the last view into
 * it is garbage-collected, so a view never outlives its pages, even after close().
 */
const WINDOW = 512 * 2 ** 20;
/** Mapping offsets are aligned to this: a multiple of every OS page size and of Windows' 64 KiB granularity. */
const MAP_GRANULE = 64 * 1024;
/** The largest view koffi can hand out as one ArrayBuffer. */
const MAX_VIEW = 2 ** 32 - 2 * MAP_GRANULE;

interface Mapper {
  map(fd: number, path: string, offset: number, length: number): ArrayBuffer;
}

function posixMapper(): Mapper {
  const koffi = loadKoffi();
  const libc = koffi.load(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6');
  const mmap = libc.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)');
  const munmap = libc.func('int munmap(void *addr, size_t length)');
  const PROT_READ = 1;
  const MAP_SHARED = 1;
  const MAP_FAILED = 2n ** 64n - 1n;
  const unmapper = new FinalizationRegistry<{ ptr: unknown; length: number }>(
    ({ ptr, length }) => void munmap(ptr, length),
  );
  return {
    map(fd, path, offset, length) {
      const ptr: unknown = mmap(null, length, PROT_READ, MAP_SHARED, fd, offset);
      if (koffi.address(ptr) === MAP_FAILED) throw new Error(`${path}: mmap of ${length} bytes at ${offset} failed`);
      const buffer = koffi.view(ptr, length);
      unmapper.register(buffer, { ptr, length });
      return buffer;
    },
  };
}

function windowsMapper(): Mapper {
  const koffi = loadKoffi();
  const kernel32 = koffi.load('kernel32.dll');
  const getOsHandle = koffi.load('ucrtbase.dll').func('intptr_t _get_osfhandle(int fd)');
  const createMapping = kernel32.func(
    'void *CreateFileMappingW(intptr_t file, void *attributes, uint32_t protect, uint32_t sizeHigh, uint32_t sizeLow, void *name)',
  );
  const mapView = kernel32.func(
    'void *MapViewOfFile(void *mapping, uint32_t access, uint32_t offsetHigh, uint32_t offsetLow, size_t length)',
  );
  const unmapView = kernel32.func('int UnmapViewOfFile(void *address)');
  const closeHandle = kernel32.func('int CloseHandle(void *handle)');
  const PAGE_READONLY = 0x02;
  const FILE_MAP_READ = 0x04;
  const unmapper = new FinalizationRegistry<unknown>((ptr) => void unmapView(ptr));
  return {
    map(fd, path, offset, length) {
      const mapping: unknown = createMapping(getOsHandle(fd), null, PAGE_READONLY, 0, 0, null);
      if (!mapping) throw new Error(`${path}: CreateFileMapping failed`);
      // The view keeps the mapping object alive; its handle is not needed after this.
      const ptr: unknown = mapView(mapping, FILE_MAP_READ, Math.floor(offset / 2 ** 32), offset % 2 ** 32, length);
      closeHandle(mapping);
      if (!ptr) throw new Error(`${path}: MapViewOfFile of ${length} bytes at ${offset} failed`);
      const buffer = koffi.view(ptr, length);
      unmapper.register(buffer, ptr);
      return buffer;
    },
  };
}

let mapper: Mapper | undefined;

/**
 * Memory mapping is unavailable inside Electron, whose V8 sandbox forbids ArrayBuffers over
 * foreign memory; GUFO_NO_MMAP=1 forces the same fallback (tests use it).
 */
export function mmapAvailable(): boolean {
  return !process.versions.electron && process.env.GUFO_NO_MMAP !== '1';
}

function getMapper(): Mapper {
  return (mapper ??= process.platform === 'win32' ? windowsMapper() : posixMapper());
}

export interface OpenedFile extends ByteSource {
  readonly path: string;
  /** Closes the descriptor. Views handed out stay valid until they are garbage-collected. */
  close(): void;
}

export interface OpenOptions {
  /**
   * False reads through positional reads even where mapping works: for one pass over a whole
   * file (a conversion), whose touched pages would otherwise all stay counted in the RSS.
   */
  mmap?: boolean;
}

/** Opens `path` read-only as a ByteSource: mapped where possible, positional reads otherwise. */
export function openFile(path: string, options: OpenOptions = {}): OpenedFile {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${path}: not a regular file`);
    return mmapAvailable() && options.mmap !== false ? mappedFile(fd, path, stat.size) : readFile(fd, path, stat.size);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function mappedFile(fd: number, path: string, size: number): OpenedFile {
  const windows = new Map<number, WeakRef<ArrayBuffer>>();
  let open = true;
  const map = (offset: number, length: number) => getMapper().map(fd, path, offset, length);

  function windowAt(k: number): ArrayBuffer {
    const cached = windows.get(k)?.deref();
    if (cached) return cached;
    if (!open) throw new Error(`${path}: file is closed`);
    const start = k * WINDOW;
    const buffer = map(start, Math.min(size - start, 2 * WINDOW));
    windows.set(k, new WeakRef(buffer));
    return buffer;
  }

  return {
    path,
    size,
    access: 'mmap',
    bytes(offset, length) {
      if (length === 0) return new Uint8Array(0);
      if (offset < 0 || length < 0 || offset + length > size) {
        throw new RangeError(`${path}: bytes [${offset}, ${offset + length}) outside the file (${size} bytes)`);
      }
      if (length <= WINDOW) {
        const k = Math.floor(offset / WINDOW);
        return new Uint8Array(windowAt(k), offset - k * WINDOW, length);
      }
      if (length > MAX_VIEW)
        throw new RangeError(`${path}: ${length} bytes is more than one view can hold; read it in parts`);
      if (!open) throw new Error(`${path}: file is closed`);
      const start = Math.floor(offset / MAP_GRANULE) * MAP_GRANULE;
      return new Uint8Array(map(start, offset + length - start), offset - start, length);
    },
    close() {
      if (!open) return;
      open = false;
      windows.clear();
      closeSync(fd);
    },
  };
}

function readFile(fd: number, path: string, size: number): OpenedFile {
  let open = true;
  return {
    path,
    size,
    access: 'read',
    bytes(offset, length) {
      if (!open) throw new Error(`${path}: file is closed`);
      if (offset < 0 || length < 0 || offset + length > size) {
        throw new RangeError(`${path}: bytes [${offset}, ${offset + length}) outside the file (${size} bytes)`);
      }
      const out = new Uint8Array(length);
      for (let done = 0; done < length;) {
        const n = readSync(fd, out, done, length - done, offset + done);
        if (n === 0) throw new Error(`${path}: file shrank while reading`);
        done += n;
      }
      return out;
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
