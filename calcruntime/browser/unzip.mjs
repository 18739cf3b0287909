// The members of a zip whose members are stored (not compressed), as the build writes the
// compiled copies of the wheels (calcruntime/build compiled_wheels), written into
// Pyodide's file system under `dir`: what `pyodide.unpackArchive(bytes, "zip")` does, without
// its Python side (shutil.unpack_archive, zipfile, and sysconfig to find site-packages), which
// cost the phone's first visit 50-80 ms of the worker's time (install 48-182 -> 22-72 ms) and,
// with the build's scripts installing the same way, 41 kB of the standard library (tarfile,
// sysconfig: issue 12). Used by worker.mjs and calcruntime/node/pyodide_node_run.mjs (the tests' plain start).
// Format: PKWARE's APPNOTE.TXT, 4.3.7 (local file header), 4.3.12 (central directory), 4.3.16
// (end of central directory record); no ZIP64, no encryption, compression method 0 only: any
// other zip is refused with a message that names the member.
const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export function storedMembers(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let end = b.length - 22;
  const stop = Math.max(0, end - 65535); // the record's comment is at most 64 KiB
  while (end >= stop && dv.getUint32(end, true) !== EOCD) end--;
  if (end < stop) throw new Error("zip: no end of central directory record");
  const count = dv.getUint16(end + 10, true);
  let p = dv.getUint32(end + 16, true);
  const names = new TextDecoder("utf-8", { fatal: true });
  const out = [];
  for (let i = 0; i < count; i++) {
    if (p + 46 > b.length || dv.getUint32(p, true) !== CENTRAL) throw new Error(`zip: central directory entry ${i} is damaged`);
    const flags = dv.getUint16(p + 8, true);
    const method = dv.getUint16(p + 10, true);
    const size = dv.getUint32(p + 20, true);
    const nameLen = dv.getUint16(p + 28, true);
    const skip = nameLen + dv.getUint16(p + 30, true) + dv.getUint16(p + 32, true);
    const local = dv.getUint32(p + 42, true);
    const name = names.decode(b.subarray(p + 46, p + 46 + nameLen));
    p += 46 + skip;
    if (flags & 1) throw new Error(`zip: ${name} is encrypted`);
    if (method !== 0) throw new Error(`zip: ${name} is compressed (method ${method}), not stored`);
    if (name.startsWith("/") || name.split("/").includes("..")) throw new Error(`zip: ${name}: a path outside the folder`);
    if (name.endsWith("/")) continue; // a folder: made with the files in it
    if (dv.getUint32(local, true) !== LOCAL) throw new Error(`zip: ${name}: no local header`);
    const start = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
    if (start + size > b.length) throw new Error(`zip: ${name} runs past the end`);
    out.push([name, b.subarray(start, start + size)]);
  }
  return out;
}

// Writes every member under `dir` (made as needed) in `FS` (Pyodide's `pyodide.FS`).
export function unpackStored(FS, bytes, dir) {
  const members = storedMembers(bytes); // all checked before the first file is written
  for (const [name, data] of members) {
    const path = `${dir}/${name}`;
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, data);
  }
  return members.length;
}

// Installs the compiled copies `archives` (each the bytes of a stored zip) into the
// site-packages of Pyodide `py`, where Pyodide's own package loader puts packages, and has the
// import system see them. The worker, the build's scripts and the tests install so.
export function installStored(py, archives) {
  const site = py.runPython("from pyodide._package_loader import SITE_PACKAGES; str(SITE_PACKAGES)");
  for (const bytes of archives) unpackStored(py.FS, bytes, site);
  py.runPython("import importlib; importlib.invalidate_caches()");
}

// The standard library's second zip (calcruntime/build STDLIB_REST_ZIP: the modules the
// calculators use that Python's start does not import; the first zip is loadPyodide's
// `stdLibURL`), written at STDLIB_REST_PATH in Pyodide `py`'s file system and put on sys.path
// just after the first, before advisor is imported: by the plain start (worker.mjs) and the
// build's snapshot, which imports every module of it, so that a snapshot start needs not the
// file (zipimport keeps its table of contents, and reads the file only for a module's code).
const STDLIB_REST_PATH = "/lib/python_stdlib_rest.zip";
export function mountStdlibRest(py, bytes) {
  py.FS.writeFile(STDLIB_REST_PATH, bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
  py.runPython(`
import sys
if ${JSON.stringify(STDLIB_REST_PATH)} not in sys.path:
    _i = next(i for i, p in enumerate(sys.path) if p.endswith(".zip"))
    sys.path.insert(_i + 1, ${JSON.stringify(STDLIB_REST_PATH)})
    del _i
`);
}

// The names of the modules a zip of compiled modules holds ("html/__init__.pyc" -> "html",
// "urllib/parse.pyc" -> "urllib.parse"): the build's snapshot imports those of the second zip.
export function storedModules(bytes) {
  return storedMembers(bytes).map(([n]) => n.replace(/\.pyc$/, "").replace(/\/__init__$/, "").replaceAll("/", "."));
}
