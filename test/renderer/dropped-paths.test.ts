import { describe, expect, it } from 'vitest';
import { droppedPaths, fileUriToPath, pathsFromUriList } from '../../src-renderer/lib/dropped-paths';

describe('pathsFromUriList', () => {
  it('reads file URIs, one a line, skipping comments and other schemes', () => {
    const list =
      '# dragged from Files\r\nfile:///home/me/models/a%20b.gguf\r\nhttps://example.com/x.gguf\r\nfile:///home/me/%C3%A9t%C3%A9\r\n';
    expect(pathsFromUriList(list)).toEqual(['/home/me/models/a b.gguf', '/home/me/été']);
    expect(pathsFromUriList('')).toEqual([]);
  });
});

describe('fileUriToPath', () => {
  it('turns Windows drive and UNC URIs into Windows paths', () => {
    expect(fileUriToPath('file:///C:/Models/x.gguf')).toBe('C:\\Models\\x.gguf');
    expect(fileUriToPath('file://server/share/x.gguf')).toBe('\\\\server\\share\\x.gguf');
    expect(fileUriToPath('file://localhost/srv/x.gguf')).toBe('/srv/x.gguf');
    expect(fileUriToPath('not a uri')).toBeNull();
  });
});

describe('droppedPaths', () => {
  const file = new File(['x'], 'x.gguf');
  const transfer = (uriList: string) => ({
    getData: (type: string) => (type === 'text/uri-list' ? uriList : ''),
    files: [file] as unknown as FileList,
  });

  it('prefers the URI list, else asks Electron for each file’s path, else has none', () => {
    expect(droppedPaths(transfer('file:///a.gguf'), () => '/ignored')).toEqual(['/a.gguf']);
    expect(droppedPaths(transfer(''), (f) => `/electron/${f.name}`)).toEqual(['/electron/x.gguf']);
    expect(droppedPaths(transfer(''), () => '')).toEqual([]);
    expect(droppedPaths(transfer(''))).toEqual([]);
  });
});
