"""Systems a buyer can buy: SXM and OAM accelerators are sold soldered to baseboards of a fixed
size, inside servers built around them, never as loose cards; PCIe cards go into servers of 1 to
8 slots. `platform_sizes` gives the GPUs per board that an owned configuration must be made of
(whole boards; several boards make several servers).

Board sizes (vendor documents, checked: recalled, 2026-12-06):
- NVIDIA HGX A100 / H100 / H200: 4-GPU and 8-GPU baseboards (NVIDIA HGX platform page,
  https://www.nvidia.com/en-us/data-center/hgx/); HGX B200: 8 GPUs; HGX-2 (V100 SXM2): 8 or 16.
- AMD Instinct MI300X / MI325X: the 8-OAM "Instinct Platform" (https://www.amd.com/en/products/
  accelerators/instinct/mi300/platform.html); MI250X: 4-OAM (HPE Cray EX235a blade) or 8.
- Intel Gaudi 2 / Gaudi 3: 8-OAM baseboard (HLBA-225 / HLB-325; https://www.intel.com/content/
  www/us/en/products/details/processors/ai-accelerators/gaudi.html).
A rack-scale system (e.g. 72 GPUs on one NVLink domain) is another board size here.
"""

from __future__ import annotations

BOARD_SIZES = {
    "sxm2": (8, 16),
    "sxm4": (4, 8),
    "sxm5": (4, 8),
    "sxm6": (8,),
    "oam": (8,),
}
BY_GPU = {"mi250x": (4, 8)}  # exceptions to the form factor's sizes


def platform_sizes(gpu) -> tuple[int, ...]:
    """GPUs per board an owned configuration of `gpu` is made of; () for PCIe cards (any
    count a server holds)."""
    if gpu.id in BY_GPU:
        return BY_GPU[gpu.id]
    return BOARD_SIZES.get(str(getattr(gpu, "form_factor", "") or ""), ())


def ownable(gpu, count: int) -> bool:
    """Whether `count` cards of `gpu` can be bought as whole boards (module docstring)."""
    sizes = platform_sizes(gpu)
    return not sizes or any(count % s == 0 for s in sizes)
