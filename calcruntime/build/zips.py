"""Zips the worker fetches and their compressed copies: gzip (zopfli) and brotli copies of a
zip, the probe that tells the worker which copy a host serves, splitting a zip, precompressed
copies of the text and wasm files."""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.exceptions import PluginError

from .paths import CACHE, _cache_put, _write, cached_step


@cached_step
def gzip_copy(data: bytes) -> bytes:
    """NAME.zip.gz for a zip of stored members that the worker fetches whole and unpacks with
    the browser's DecompressionStream (python_stdlib.zip, the compiled wheels): a host serves it
    as the file it is, so it is as small on a host that compresses nothing (or only text, as
    GitHub Pages) as on any other. zopfli's deflate (15 iterations: 3-4 % smaller than gzip -9,
    the same gzip format) where the `zopfli` package is installed (requirements-dev.txt), else
    gzip -9; mtime 0 (deterministic), checked to decompress to `data`, cached by its SHA-256
    (zopfli takes about 11 s for the standard library)."""
    try:
        import zopfli.gzip
    except ImportError:
        zopfli = None
    tag = "zopfli15" if zopfli else "gzip9"
    cached = CACHE / f"gz-{tag}-{hashlib.sha256(data).hexdigest()[:16]}.gz"
    if cached.is_file():
        return cached.read_bytes()
    if zopfli:
        packed = zopfli.gzip.compress(data, numiterations=15)  # its header's mtime is 0
    else:
        packed = gzip.compress(data, compresslevel=9, mtime=0)
    if gzip.decompress(packed) != data:
        raise PluginError("gzip: the compressed copy does not decompress to the file")
    _cache_put(cached, packed, "gz-*.gz", keep=16)
    return packed


def write_zip(assets: Path, name: str, data: bytes) -> None:
    """A zip the worker fetches (`data`, members stored) as NAME, with its two compressed copies:
    NAME.gz (`gzip_copy`), which the worker fetches on any host, and NAME.br (brotli, as
    `precompressed` makes it, where the `brotli` package is installed), which a host that sends
    precompressed copies (nginx `brotli_static`, Caddy `precompressed br`) serves for NAME with
    `Content-Encoding: br`; the worker asks for NAME then (`ZIP_PROBE`). Brotli made the
    standard library (then one zip) 567 kB instead of zopfli's 731 kB, 0.2 s less on the phone
    profile of issue 12."""
    _write(assets / name, data)
    _write(assets / (name + ".gz"), gzip_copy(data))
    br = precompressed(data).get(".br")
    if br is not None:
        _write(assets / (name + ".br"), br)


# A small zip whose response tells the worker whether this host sends precompressed brotli
# copies of zips (`Content-Encoding: br`): then it asks for every zip by its own name, else for
# NAME.zip.gz. Asked by its own name, like the zips: a host that compresses by type (most
# compress text, not application/zip) answers it as it answers them.
ZIP_PROBE = "zip-encoding.zip"


def zip_probe() -> bytes:
    """`ZIP_PROBE`: one stored member that says what the file is for (deterministic)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        zi = zipfile.ZipInfo("README.txt", date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        out.writestr(
            zi,
            "GPU Advisor's calculators fetch this file first: when the host sends it with\n"
            "Content-Encoding: br (it serves the precompressed NAME.br beside NAME), they fetch\n"
            "the runtime's zips by their own names, brotli-compressed; otherwise NAME.zip.gz.\n"
            "See README.md, section Compression.\n",
        )
    return buf.getvalue()


def split_zip(data: bytes, first: Callable[[str], bool]) -> tuple[bytes, bytes]:
    """Two zips from one (`data`): the members whose names `first` accepts, and the others; in
    the original order, with their headers as they were (stored members stay stored)."""
    bufs = io.BytesIO(), io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(bufs[0], "w") as a,
        zipfile.ZipFile(bufs[1], "w") as b,
    ):
        for info in src.infolist():
            (a if first(info.filename) else b).writestr(info, src.read(info))
    return bufs[0].getvalue(), bufs[1].getvalue()


# Precompressed copies next to the calculators' text and wasm files, for hosts that serve
# them (nginx gzip_static / brotli_static, Caddy `file_server { precompressed br gzip }`: README,
# "Hosting"); a host that does not still compresses on the fly or sends the file as it is. The
# browser decodes them to the very bytes of the file (checked here), so the lock file's sha256
# and the snapshot's gzip are untouched: the snapshot and the wheels and the zip are compressed
# already and get no copy.
PRECOMPRESS_SUFFIXES = (".wasm", ".mjs", ".js", ".json", ".css")


PRECOMPRESS_MIN_BYTES = 1024
# lgwin 22 (4 MiB) only: of the two windows the build used to try (22 and 24, keeping the
# smaller), 22 gave every file the smaller or an equal copy (the 9.6 MB wasm 2,739,076 bytes
# against 2,769,608; every other precompressed file of the site the same length, measured
# 2026-12-07), and the first of equal lengths was kept, so the copies are byte for byte the
# same; the second window cost about 40 s of CPU on every cold build
BROTLI_WINDOWS = (22,)


@cached_step
def precompressed(data: bytes) -> dict[str, bytes]:
    """{".gz": gzip -9 (mtime 0), ".br": brotli quality 11, the smallest over BROTLI_WINDOWS} of
    `data` (".br" only where the `brotli` package is installed: requirements-dev.txt), each
    checked to decompress to `data` and cached by the data's SHA-256 (brotli 11 of the 9.6 MB
    wasm takes about 25 s a window, once; gzip -9 of a build's files about 4 s)."""
    key = hashlib.sha256(data).hexdigest()[:16]
    gz_cached = CACHE / f"gz9-{key}.gz"
    if gz_cached.is_file():
        out = {".gz": gz_cached.read_bytes()}
    else:
        out = {".gz": gzip.compress(data, compresslevel=9, mtime=0)}
        if gzip.decompress(out[".gz"]) != data:
            raise PluginError("gzip: the compressed copy does not decompress to the file")
        _cache_put(gz_cached, out[".gz"], "gz9-*.gz", keep=32)
    try:
        import brotli
    except ImportError:
        return out
    cached = CACHE / f"br2-{key}.br"
    if cached.is_file():
        out[".br"] = cached.read_bytes()
    else:
        # the smallest copy over BROTLI_WINDOWS (its note), side by side where there are
        # several (brotli lets go of the GIL), the first of equal lengths
        with ThreadPoolExecutor(max_workers=len(BROTLI_WINDOWS)) as pool:
            packed = list(
                pool.map(lambda w: brotli.compress(data, quality=11, lgwin=w), BROTLI_WINDOWS)
            )
        out[".br"] = min(packed, key=len)
        if brotli.decompress(out[".br"]) != data:
            raise PluginError("brotli: the compressed copy does not decompress to the file")
        _cache_put(cached, out[".br"], "br2-*.br", keep=32)
    return out


def write_precompressed(folder: Path) -> None:
    """NAME.gz and NAME.br next to every file of `folder` that is text or wasm and not tiny."""
    for path in sorted(folder.iterdir()):
        if path.suffix not in PRECOMPRESS_SUFFIXES or not path.is_file():
            continue
        data = path.read_bytes()
        if len(data) < PRECOMPRESS_MIN_BYTES:
            continue
        for suffix, packed in precompressed(data).items():
            _write(path.with_name(path.name + suffix), packed)
