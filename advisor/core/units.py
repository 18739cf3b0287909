"""Units. Bytes internally; GB = 10**9 bytes, GiB = 2**30 bytes (IEC 80000-13)."""

from __future__ import annotations

KIB = 2**10
MIB = 2**20
GIB = 2**30
TIB = 2**40
GB = 10**9
TB = 10**12


def gib(n_bytes: float) -> float:
    """Bytes to GiB (2**30)."""
    return n_bytes / GIB


def gb(n_bytes: float) -> float:
    """Bytes to GB (10**9)."""
    return n_bytes / GB


def fmt_bytes(n_bytes: float, digits: int = 2) -> str:
    """'15.23 GiB (16.35 GB)': both units, as the site shows sizes to readers."""
    return f"{gib(n_bytes):.{digits}f} GiB ({gb(n_bytes):.{digits}f} GB)"
