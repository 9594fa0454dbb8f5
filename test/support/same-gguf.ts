import { expect } from 'vitest';
import { openGguf } from '../../src-main/node/gguf-io';

/** Asserts two GGUF files hold the same tensors (names, types, bytes) and the same general.file_type; `label` names the case. */
export function expectSameTensors(ours: string, theirs: string, label: string): void {
  const a = openGguf(ours);
  const b = openGguf(theirs);
  try {
    expect(
      a.gguf.tensors.map((t) => [t.name, t.type.name]),
      label,
    ).toEqual(b.gguf.tensors.map((t) => [t.name, t.type.name]));
    for (const t of a.gguf.tensors) {
      const same = Buffer.from(a.gguf.tensorData(t)).equals(Buffer.from(b.gguf.tensorData(b.gguf.tensor(t.name)!)));
      expect(same, `${label} ${t.name}`).toBe(true);
    }
    expect(a.gguf.getNumber('general.file_type'), label).toBe(b.gguf.getNumber('general.file_type'));
  } finally {
    a.file.close();
    b.file.close();
  }
}
