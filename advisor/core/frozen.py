"""Frozen dataclasses that compute their hash once.

The time and memory models memoise on model descriptions (`functools.lru_cache` keyed by a
`ModelSpec`, `layer_groups` counting a stack's `Layer`s): with the hash dataclasses generate, every
look-up re-hashed every field, the layer list included, and a profile of one client report spent
a third of its time in `hash` (issue 26's suite time). A class takes these two in its body:

    __hash__ = cached_hash          # the generated hash's value, computed once per object
    __getstate__ = state_without_hash

The value equals the generated one (the hash of the tuple of the fields that take part in it:
`hash=True`, or `compare=True` where `hash` is None; Python's dataclasses `_hash_fn`), and
equality is still the generated field-by-field `__eq__`. The cached value is left out of a
pickle or copy: string hashes differ between processes (PYTHONHASHSEED)."""

from __future__ import annotations

import dataclasses
import functools

_KEY = "_cached_hash"


@functools.cache
def _hashed_fields(cls) -> tuple[str, ...]:
    return tuple(
        f.name for f in dataclasses.fields(cls) if (f.compare if f.hash is None else f.hash)
    )


def cached_hash(self) -> int:
    """The dataclass hash of `self`, computed on the first call and kept on the object."""
    d = self.__dict__
    h = d.get(_KEY)
    if h is None:
        h = hash(tuple(getattr(self, name) for name in _hashed_fields(type(self))))
        object.__setattr__(self, _KEY, h)  # frozen: bypass the generated __setattr__
    return h


def state_without_hash(self) -> dict:
    """`__dict__` without the cached hash (pickle, copy, deepcopy)."""
    d = dict(self.__dict__)
    d.pop(_KEY, None)
    return d
