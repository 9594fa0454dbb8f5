/**
 * Sorts `a` in place exactly as libstdc++'s std::sort does (introsort: median-of-three quicksort,
 * heapsort past the depth limit, final insertion sort), so that elements the comparator calls equal
 * end up in the same order as in llama.cpp, whose special-token order comes from std::sort.
 */
export function libstdcxxSort<T>(a: T[], less: (x: T, y: T) => boolean): void {
  const n = a.length;
  if (n < 2) return;
  const swap = (i: number, j: number) => {
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  };
  const THRESHOLD = 16;

  const adjustHeap = (first: number, hole: number, len: number, value: T) => {
    const top = hole;
    let child = hole;
    while (child < Math.trunc((len - 1) / 2)) {
      child = 2 * (child + 1);
      if (less(a[first + child]!, a[first + child - 1]!)) child--;
      a[first + hole] = a[first + child]!;
      hole = child;
    }
    if ((len & 1) === 0 && child === Math.trunc((len - 2) / 2)) {
      child = 2 * (child + 1);
      a[first + hole] = a[first + child - 1]!;
      hole = child - 1;
    }
    let parent = Math.trunc((hole - 1) / 2);
    while (hole > top && less(a[first + parent]!, value)) {
      a[first + hole] = a[first + parent]!;
      hole = parent;
      parent = Math.trunc((hole - 1) / 2);
    }
    a[first + hole] = value;
  };
  const heapSort = (first: number, last: number) => {
    const len = last - first;
    if (len >= 2) {
      for (let parent = Math.trunc((len - 2) / 2); ; parent--) {
        adjustHeap(first, parent, len, a[first + parent]!);
        if (parent === 0) break;
      }
    }
    while (last - first > 1) {
      last--;
      const value = a[last]!;
      a[last] = a[first]!;
      adjustHeap(first, 0, last - first, value);
    }
  };
  const moveMedianToFirst = (result: number, x: number, y: number, z: number) => {
    if (less(a[x]!, a[y]!)) {
      if (less(a[y]!, a[z]!)) swap(result, y);
      else if (less(a[x]!, a[z]!)) swap(result, z);
      else swap(result, x);
    } else if (less(a[x]!, a[z]!)) swap(result, x);
    else if (less(a[y]!, a[z]!)) swap(result, z);
    else swap(result, y);
  };
  const partition = (first: number, last: number, pivot: number) => {
    for (;;) {
      while (less(a[first]!, a[pivot]!)) first++;
      last--;
      while (less(a[pivot]!, a[last]!)) last--;
      if (!(first < last)) return first;
      swap(first, last);
      first++;
    }
  };
  const introsort = (first: number, last: number, depth: number) => {
    while (last - first > THRESHOLD) {
      if (depth === 0) {
        heapSort(first, last);
        return;
      }
      depth--;
      const mid = first + Math.trunc((last - first) / 2);
      moveMedianToFirst(first, first + 1, mid, last - 1);
      const cut = partition(first + 1, last, first);
      introsort(cut, last, depth);
      last = cut;
    }
  };
  const linearInsert = (i: number) => {
    const value = a[i]!;
    let next = i - 1;
    while (less(value, a[next]!)) {
      a[i] = a[next]!;
      i = next;
      next--;
    }
    a[i] = value;
  };
  const insertionSort = (first: number, last: number) => {
    for (let i = first + 1; i < last; i++) {
      if (less(a[i]!, a[first]!)) {
        const value = a[i]!;
        for (let k = i; k > first; k--) a[k] = a[k - 1]!;
        a[first] = value;
      } else linearInsert(i);
    }
  };

  introsort(0, n, 2 * Math.floor(Math.log2(n)));
  if (n > THRESHOLD) {
    insertionSort(0, THRESHOLD);
    for (let i = THRESHOLD; i < n; i++) linearInsert(i);
  } else insertionSort(0, n);
}
