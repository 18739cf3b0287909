"""Counting live tensor-storage bytes on CPU, and an imposed byte budget.

`StorageTracker` is a `TorchDispatchMode` (torch.utils._python_dispatch) that sees every op's
outputs, records each untyped storage it has not seen before (its `nbytes()`), and registers a
`weakref.finalize` that subtracts it when the storage is freed: the live and peak byte counts
are then what `torch.cuda.memory_allocated()` / `max_memory_allocated()` report on a GPU, minus
the CUDA caching allocator's 512-byte rounding. With `budget_bytes` set, an allocation that
would take the live bytes over the budget raises `BudgetExceeded`, so the batch-size search can
be exercised on a machine with no accelerator.

Storages that exist before the mode is entered (weights, optimizer states, inputs) are passed as
`existing` tensors and registered by storage identity, like any storage an op returns: a view of
one that an op returns later (`aten.t` of a Linear / tied-head weight in forward and backward,
`aten.view`) is then recognised as already counted. Counting them as a plain byte baseline
instead re-counted every such view's storage (211,016,704 bytes too many for 2-layer GPT-2 at
vocabulary 50257: the tied 50257 x 768 table and the Conv1D weights, each seen through `t()`).
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
    """Live and peak bytes of the distinct storages alive: those in `existing` (counted once,
    when the tracker is made) and every new one an op returns; each is uncounted when freed."""

    def __init__(self, existing=(), budget_bytes: int | None = None):
        super().__init__()
        self.budget_bytes = budget_bytes
        self.live_bytes = 0
        self.peak_bytes = 0
        self._sizes: dict[int, int] = {}
        for t in existing:
            self._add(t, check_budget=False)
        self.baseline_bytes = self.live_bytes

    def _free(self, key: int) -> None:
        self.live_bytes -= self._sizes.pop(key, 0)

    def _add(self, t, check_budget: bool = True) -> None:
        if not isinstance(t, torch.Tensor) or t.device.type == "meta":
            return
        st = t.untyped_storage()
        key = st._cdata
        if key in self._sizes:
            return
        n = st.nbytes()
        self._sizes[key] = n
        self.live_bytes += n
        weakref.finalize(st, self._free, key)
        if self.live_bytes > self.peak_bytes:
            self.peak_bytes = self.live_bytes
        if check_budget and self.budget_bytes is not None and self.live_bytes > self.budget_bytes:
            raise BudgetExceeded(
                f"live tensor bytes {self.live_bytes} exceed the budget {self.budget_bytes}"
            )

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            self._add(t)
        return out
