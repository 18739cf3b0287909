// The memory snapshot as the site ships it (advisor.snapshot.gz, calcruntime/build
// `sparse_snapshot`): gzip of the snapshot less its all-zero 4 KiB blocks. Pyodide's snapshot is
// the runtime's whole linear memory, 31 MB, of which 15 MB are zero blocks; inflating only the
// 16.6 MB of the others, and placing them in a zeroed buffer, halves the work of the browser's
// gunzip on every snapshot start (a desktop's cold start and every reload; issue 12). Used by
// worker.mjs and calcruntime/node/pyodide_node_run.mjs (the tests' snapshot start).
// Layout, little-endian: "ASP1", u32 block size, u32 length of the snapshot, u32 number of
// blocks n, a bitmap of ceil(n / 8) bytes (bit i, least significant first: block i is stored),
// then the stored blocks in order (the last one as long as what remains of the snapshot).
const MAGIC = [0x41, 0x53, 0x50, 0x31]; // "ASP1"

export function unsparse(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (b.length < 16 || MAGIC.some((m, i) => b[i] !== m)) throw new Error("snapshot: not a sparse snapshot (ASP1)");
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const block = dv.getUint32(4, true);
  const size = dv.getUint32(8, true);
  const n = dv.getUint32(12, true);
  if (!block || n !== Math.ceil(size / block)) throw new Error(`snapshot: ${n} blocks of ${block} bytes cannot hold ${size}`);
  const mapEnd = 16 + Math.ceil(n / 8);
  if (mapEnd > b.length) throw new Error("snapshot: truncated block map");
  const out = new Uint8Array(size);
  let p = mapEnd;
  for (let i = 0; i < n; i++) {
    if (!(b[16 + (i >> 3)] & (1 << (i & 7)))) continue;
    const len = Math.min(block, size - i * block);
    if (p + len > b.length) throw new Error(`snapshot: truncated at block ${i}`);
    out.set(b.subarray(p, p + len), i * block);
    p += len;
  }
  if (p !== b.length) throw new Error(`snapshot: ${b.length - p} bytes after the last block`);
  return out;
}

// The name the snapshot's gzip header gives it (RFC 1952 FNAME: calcruntime/build
// `gzip_named` writes "advisor.snapshot." + the first 32 hex digits of the sha256 of what it
// holds), read from the first bytes of the file: worker.mjs tags its Cache Storage copy with it.
// null when the header has no name or is cut short before the name's end; an error when `head`
// is not the start of a gzip file.
export function gzipName(head) {
  const b = head instanceof Uint8Array ? head : new Uint8Array(head);
  if (b.length < 10 || b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8) throw new Error("snapshot: not a gzip file");
  const flags = b[3];
  let p = 10;
  if (flags & 4) p += 2 + (b[10] | (b[11] << 8)); // FEXTRA
  if (!(flags & 8) || p >= b.length) return null;
  const end = b.indexOf(0, p);
  return end < 0 ? null : String.fromCharCode(...b.subarray(p, end));
}
