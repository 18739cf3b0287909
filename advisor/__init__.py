"""GPU Advisor: memory, compute-time, cost and recommendation models for AI accelerators.

Pure Python, standard library only: the same code runs in CPython 3.11 (CLI, tests, site build)
and in Pyodide's Python 3.14 (the in-browser calculators).
"""

__version__ = "0.1.0"
