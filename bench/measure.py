"""Timing, summary statistics and telemetry.

Timing: warm-up iterations first, then one sample per iteration. On CUDA each sample is the
elapsed time between two `torch.cuda.Event(enable_timing=True)` recorded around the work on the
current stream (https://pytorch.org/docs/stable/generated/torch.cuda.Event.html; `elapsed_time`
returns milliseconds), read after one `torch.cuda.synchronize()`, so the host never stalls
between iterations. On CPU each sample is a `time.perf_counter()` difference.

Telemetry: a daemon thread samples NVML (nvidia-ml-py's `pynvml`: utilisation, memory-interface
utilisation, temperature, power, SM and memory clocks, clock-event (throttle) reasons;
https://docs.nvidia.com/deploy/nvml-api/) on GPUs, and /proc (CPU utilisation from /proc/stat,
resident memory from /proc/self/status, temperature from /sys/class/thermal) on CPU.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks (the default
    'linear' method of numpy.percentile)."""
    if not values:
        raise ValueError("percentile of an empty list")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(values: list[float], unit: str) -> dict:
    """median, p10, p90, min, max, mean and n of raw samples."""
    return {
        "median": percentile(values, 50),
        "p10": percentile(values, 10),
        "p90": percentile(values, 90),
        "min": min(values),
        "max": max(values),
        "mean": sum(values) / len(values),
        "n": len(values),
        "unit": unit,
    }


def is_cuda(device) -> bool:
    return str(device).startswith("cuda")


def time_fn(fn: Callable[[], object], *, device, warmup: int, iters: int) -> list[float]:
    """Run `fn` `warmup` times, then `iters` timed times; seconds per iteration."""
    import torch

    for _ in range(warmup):
        fn()
    if is_cuda(device):
        torch.cuda.synchronize()
        pairs = []
        for _ in range(iters):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize()
        return [s.elapsed_time(e) / 1e3 for s, e in pairs]
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


# ------------------------------------------------------------------------------------------------
# Telemetry
# ------------------------------------------------------------------------------------------------


def _read_proc_stat() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs from the first line of /proc/stat (proc(5): user nice
    system idle iowait irq softirq steal ...; idle time = idle + iowait)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            parts = f.readline().split()
    except OSError:
        return None
    if not parts or parts[0] != "cpu":
        return None
    vals = [int(x) for x in parts[1:9]]
    idle = vals[3] + vals[4]
    total = sum(vals)
    return total - idle, total


def read_status_bytes(key: str, pid: str = "self") -> int | None:
    """A `kB` field of /proc/<pid>/status (VmRSS, VmHWM) in bytes."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _thermal_zone() -> Path | None:
    for zone in sorted(Path("/sys/class/thermal").glob("thermal_zone*")):
        if (zone / "temp").exists():
            return zone / "temp"
    return None


class _ProcSource:
    name = "proc"

    def __init__(self):
        self._last = _read_proc_stat()
        self._temp = _thermal_zone()

    def sample(self) -> dict:
        out: dict = {}
        now = _read_proc_stat()
        if now and self._last and now[1] > self._last[1]:
            out["cpu_util_pct"] = 100.0 * (now[0] - self._last[0]) / (now[1] - self._last[1])
        self._last = now
        rss = read_status_bytes("VmRSS")
        if rss is not None:
            out["rss_bytes"] = float(rss)
        if self._temp is not None:
            with contextlib.suppress(OSError, ValueError):
                out["temperature_c"] = int(self._temp.read_text().strip()) / 1000.0
        return out

    def close(self):
        pass


# Clock-event ("throttle") reason bits, nvml.h `nvmlClocksEventReason*`.
_NVML_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def decode_throttle(mask: int) -> list[str]:
    return [name for bit, name in _NVML_REASONS.items() if mask & bit]


class _NvmlSource:
    name = "nvml"

    def __init__(self, index: int = 0):
        import pynvml

        self.nv = pynvml
        pynvml.nvmlInit()
        self.h = pynvml.nvmlDeviceGetHandleByIndex(index)

    def sample(self) -> dict:
        nv, h, out = self.nv, self.h, {}
        try:
            u = nv.nvmlDeviceGetUtilizationRates(h)
            out["gpu_util_pct"] = float(u.gpu)
            out["mem_bw_util_pct"] = float(u.memory)
        except nv.NVMLError:
            pass
        for key, fn in (
            ("temperature_c", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            ("power_w", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),  # milliwatts
            ("sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            ("mem_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            ("memory_used_bytes", lambda: nv.nvmlDeviceGetMemoryInfo(h).used),
        ):
            with contextlib.suppress(nv.NVMLError):
                out[key] = float(fn())
        try:
            getter = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or (
                nv.nvmlDeviceGetCurrentClocksThrottleReasons
            )
            out["throttle_mask"] = float(getter(h))
        except nv.NVMLError:
            pass
        return out

    def close(self):
        with contextlib.suppress(Exception):
            self.nv.nvmlShutdown()


class Telemetry:
    """Samples in a daemon thread every `interval_s` between `start()` and `stop()`.

    `result()` -> {"source", "interval_s", "series": {"t_s": [...], key: [...]}, "summary":
    {key: {"mean", "min", "max"}}, "throttle_reasons": [...]} (throttle reasons on NVML only)."""

    def __init__(self, device, interval_s: float = 0.1):
        self.interval_s = interval_s
        self.source = None
        if is_cuda(device):
            try:
                import torch

                idx = torch.device(device).index or 0
                self.source = _NvmlSource(idx)
            except Exception as exc:  # NVML missing or unsupported: keep running without it
                self.error = f"nvml unavailable: {exc}"
        else:
            self.source = _ProcSource()
        self.rows: list[tuple[float, dict]] = []
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> Telemetry:
        if self.source is None:
            return self
        self._t0 = time.perf_counter()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True, name="bench-telemetry")
        self._thread.start()
        return self

    def _run(self):
        while True:
            try:
                row = self.source.sample()
            except Exception:
                row = {}
            self.rows.append((time.perf_counter() - self._t0, row))
            if self._stop.wait(self.interval_s):
                break

    def stop(self) -> Telemetry:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self.source.close()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def result(self) -> dict | None:
        if self.source is None:
            return {"source": "none", "note": getattr(self, "error", "no telemetry source")}
        rows = [(t, r) for t, r in self.rows if r]
        if not rows:
            return {"source": self.source.name, "note": "no samples"}
        # Rows missing a reading the last row has (the first /proc sample has no CPU delta yet)
        # are dropped, so that every series is aligned with t_s.
        keys = list(rows[-1][1])
        rows = [(t, r) for t, r in rows if all(k in r for k in keys)]
        series = {"t_s": [round(t, 4) for t, _ in rows]}
        summary = {}
        reasons: set[str] = set()
        for k in keys:
            vals = [float(r[k]) for _, r in rows]
            if k == "throttle_mask":
                for v in vals:
                    reasons.update(decode_throttle(int(v)))
                continue
            series[k] = vals
            summary[k] = {"mean": sum(vals) / len(vals), "min": min(vals), "max": max(vals)}
        out = {
            "source": self.source.name,
            "interval_s": self.interval_s,
            "series": series,
            "summary": summary,
        }
        if self.source.name == "nvml":
            out["throttle_reasons"] = sorted(reasons)
        return out


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
