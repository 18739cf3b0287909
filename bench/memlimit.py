"""Counting live tensor-storage bytes on CPU, and an imposed byte budget.

`StorageTracker` is a `TorchDispatchMode` (torch.utils._python_dispatch) that sees every op's
outputs, records each untyped storage it has not seen before (its `nbytes()`), and registers a
`weakref.finalize` that subtracts it when the storage is freed: the live and peak byte counts
are then what `torch.cuda.memory_allocated()` / `max_memory_allocated()` report on a GPU, minus
the CUDA caching allocator's 512-byte rounding. With `budget_bytes` set, an allocation that
would take the live bytes over the budget raises `BudgetExceeded`, so the batch-size search can
be exercised on a machine with no accelerator. Storages that exist before the mode is entered
(model weights) are counted through `baseline_bytes`.
"""

from __future__ import annotations

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class BudgetExceeded(RuntimeError):
    """An allocation would exceed the imposed byte budget (the CPU stand-in for a CUDA OOM)."""


def storage_bytes(tensors) -> int:
    """Bytes of the distinct storages behind `tensors`."""
    seen, total = set(), 0
    for t in tensors:
        st = t.untyped_storage()
        if st._cdata not in seen:
            seen.add(st._cdata)
            total += st.nbytes()
    return total


class StorageTracker(TorchDispatchMode):
    def __init__(self, baseline_bytes: int = 0, budget_bytes: int | None = None):
        super().__init__()
        self.baseline_bytes = baseline_bytes
        self.budget_bytes = budget_bytes
        self.live_bytes = baseline_bytes
        self.peak_bytes = baseline_bytes
        self._sizes: dict[int, int] = {}

    def _free(self, key: int) -> None:
        self.live_bytes -= self._sizes.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            st = t.untyped_storage()
            key = st._cdata
            if key in self._sizes:
                continue
            n = st.nbytes()
            self._sizes[key] = n
            self.live_bytes += n
            weakref.finalize(st, self._free, key)
            if self.live_bytes > self.peak_bytes:
                self.peak_bytes = self.live_bytes
            if self.budget_bytes is not None and self.live_bytes > self.budget_bytes:
                raise BudgetExceeded(
                    f"live tensor bytes {self.live_bytes} exceed the budget {self.budget_bytes}"
                )
        return out
