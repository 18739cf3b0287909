"""calcruntime/browser/unzip.mjs, the worker's installer of the compiled wheels (stored zips), under
Node against a file system that records what it is given: every member written byte for byte
under the folder, folders made, and a zip it cannot read faithfully (a compressed member, an
encrypted one, a path outside the folder, a truncated file) refused with a message naming the
member, before anything is written."""

from __future__ import annotations

import base64
import io
import json
import shutil
import zipfile

import pytest
from node_helpers import CALC, node_module

pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
]

SCRIPT = """
const m = await import(process.argv[1]);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const files = {}, dirs = [];
const FS = { mkdirTree: (d) => dirs.push(d),
             writeFile: (p, data) => { files[p] = Buffer.from(data).toString("base64"); } };
try {
  const n = m.unpackStored(FS, new Uint8Array(Buffer.from(input, "base64")), "/lib/site");
  process.stdout.write(JSON.stringify({ n, files, dirs }));
} catch (e) {
  process.stdout.write(JSON.stringify({ error: e.message, files }));
}
"""


def unpack(data: bytes) -> dict:
    out = node_module(SCRIPT, (CALC / "unzip.mjs").as_uri(), stdin=base64.b64encode(data).decode())
    return json.loads(out)


def make_zip(members: dict[str, bytes], method=zipfile.ZIP_STORED, comment=b"") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
        z.comment = comment
    return buf.getvalue()


def test_stored_members_are_written_byte_for_byte():
    members = {
        "advisor/__init__.pyc": bytes(range(256)) * 3,
        "advisor/_dataclass_code.bin": b"\x00" * 10,
        "advisor-0.1.0.dist-info/METADATA": "Name: gpu-advisor\nSummary: ə ö ğ\n".encode(),
        "empty.txt": b"",
    }
    got = unpack(make_zip(members, comment=b"a comment"))
    assert got["n"] == len(members)
    want = {f"/lib/site/{k}": base64.b64encode(v).decode() for k, v in members.items()}
    assert got["files"] == want
    assert "/lib/site/advisor-0.1.0.dist-info" in got["dirs"]


def test_the_sites_compiled_wheel_unpacks_as_python_reads_it(built_site):
    (wheel,) = (built_site / "assets/pyodide").glob("advisor-*.pyc.zip")
    data = wheel.read_bytes()
    got = unpack(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        want = {
            f"/lib/site/{i.filename}": base64.b64encode(z.read(i)).decode()
            for i in z.infolist()
            if not i.is_dir()
        }
    assert got["files"] == want
    assert len(want) > 20


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (make_zip({"a.py": b"x = 1\n" * 50}, zipfile.ZIP_DEFLATED), "a.py is compressed"),
        (make_zip({"../evil.py": b"x"}), "../evil.py: a path outside"),
        (make_zip({"/abs.py": b"x"}), "/abs.py: a path outside"),
        (make_zip({"a.py": b"x"})[:-30], "no end of central directory"),
        (b"not a zip at all, just text" * 3, "no end of central directory"),
    ],
    # ids of their own: a zip's bytes hold the time it was made, and xdist's workers must
    # collect the same test ids
    ids=["compressed", "path-outside", "absolute-path", "truncated", "not-a-zip"],
)
def test_a_zip_it_cannot_read_is_refused_naming_the_member(data, message):
    got = unpack(data)
    assert message in got.get("error", ""), got
    assert got["files"] == {}  # nothing written half-way


def test_nothing_is_written_when_a_later_member_is_bad():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("good.py", b"x = 1")
        z.writestr("bad.py", b"y = 2" * 40, compress_type=zipfile.ZIP_DEFLATED)
    got = unpack(buf.getvalue())
    assert "bad.py is compressed" in got["error"]
    assert got["files"] == {}
