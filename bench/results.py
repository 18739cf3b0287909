"""The environment block and the atomic, never-overwriting writer of result files.

A result is one self-describing JSON document (schema: `advisor.data.benchresults`, which validates
it on load). The file is written to a temporary name in the target folder, flushed and fsynced,
then given its final unique name (`<UTC timestamp>_<workload>_<host>_<random>.json`) with
`os.link` (fails rather than replace an existing file), falling back to an existence check and
`os.replace` where hard links are unsupported.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import re
import secrets
import socket
import sys
import tempfile
from pathlib import Path

from . import SCHEMA_VERSION


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def environment(device: str, argv: list[str] | None = None) -> dict:
    """Accelerator, driver, CUDA, torch, Python, CPU, host memory, command line and time."""
    import torch

    from .measure import cpu_count

    env = {
        "device": "cuda" if device.startswith("cuda") else "cpu",
        "accelerator": None,
        "accelerator_count": 0,
        "accelerator_memory_bytes": None,
        "compute_capability": None,
        "driver": None,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "host_memory_bytes": host_memory_bytes(),
        "hostname": socket.gethostname(),
        "command_line": ["python", "-m", "bench", *sys.argv[1:]] if argv is None else list(argv),
        "time_utc": utc_now(),
    }
    if env["device"] == "cuda":
        idx = torch.device(device).index or 0
        props = torch.cuda.get_device_properties(idx)
        env["accelerator"] = props.name
        env["accelerator_count"] = torch.cuda.device_count()
        env["accelerator_memory_bytes"] = int(props.total_memory)
        env["compute_capability"] = f"{props.major}.{props.minor}"
        try:
            import pynvml

            pynvml.nvmlInit()
            drv = pynvml.nvmlSystemGetDriverVersion()
            env["driver"] = drv.decode() if isinstance(drv, bytes) else str(drv)
            pynvml.nvmlShutdown()
        except Exception:
            env["driver"] = None
    else:
        env["accelerator"] = f"CPU: {env['cpu_model']}"
        env["accelerator_count"] = 1
    return env


def _clean(obj):
    """JSON-safe copy; a non-finite float is an error (the loader rejects them too)."""
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"non-finite number in result: {obj}")
        return obj
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _name_part(text, limit: int, fallback: str) -> str:
    """`text` as a safe file-name part: ASCII letters, digits and '-' only (no '/', '..', NUL)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-")[:limit].strip("-") or fallback


def result_name(workload: str, host: str, when: str | None = None) -> str:
    """`<UTC stamp>_<workload>_<host>_<random>.json`; workload and host are sanitised (a
    workload such as "../../x" cannot name a file outside the folder)."""
    stamp = _name_part((when or utc_now()).replace("-", "").replace(":", ""), 20, "time")
    return (
        f"{stamp}_{_name_part(workload, 40, 'workload')}_{_name_part(host, 24, 'host')}_"
        f"{secrets.token_hex(3)}.json"
    )


def _fsync_folder(folder: Path) -> None:
    """Make the new directory entry durable (the file's own fsync does not cover its name)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # e.g. a platform without directory file descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def make_result(
    workload: str,
    env: dict,
    configuration: dict,
    samples: dict,
    summary: dict,
    derived: list[dict],
    *,
    table: list[dict] | None = None,
    memory: dict | None = None,
    telemetry: dict | None = None,
    notes: list[str] | None = None,
) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "workload": workload,
        "created_utc": env["time_utc"],
        "environment": env,
        "configuration": configuration,
        "samples": samples,
        "summary": summary,
        "derived": derived,
        "table": table or [],
        "memory": memory,
        "telemetry": telemetry,
        "notes": notes or [],
    }


def derived(name: str, value, unit: str, formula: str, reason: str | None = None) -> dict:
    """A derived figure with its formula; `value` None only with a `reason`."""
    d = {"name": name, "value": value, "unit": unit, "formula": formula}
    if value is None:
        d["reason"] = reason or "not available"
    return d


def write_result(doc: dict, folder: str | os.PathLike) -> Path:
    """Write `doc` atomically under a new unique name in `folder`; never overwrites."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_clean(doc), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        for _ in range(20):
            final = folder / result_name(doc["workload"], doc["environment"]["hostname"])
            try:
                os.link(tmp, final)  # atomic, and fails if the name exists
            except FileExistsError:
                continue
            except OSError:  # no hard links here: check, then rename
                if final.exists():
                    continue
                os.replace(tmp, final)
                _fsync_folder(folder)
                return final
            os.unlink(tmp)
            _fsync_folder(folder)
            return final
        raise FileExistsError(f"could not find a free result name in {folder}")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
