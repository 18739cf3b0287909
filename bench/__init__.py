"""PyTorch benchmarks whose results feed `bench_results/` and the site's benchmark pages.

`python -m bench run WORKLOAD` (see `bench.cli`). Separate from `advisor/` (which stays standard
library only): this package needs torch (and transformers for the language-model workloads).
"""

SCHEMA_VERSION = 1
