"""GPU Advisor: memory, compute-time, cost and recommendation models for AI accelerators.

Pure Python (the standard library, PyYAML, Jinja2 and MarkupSafe, all pure or with a pure
fallback): the same code runs in CPython 3.11 (CLI, tests, site build)
and in Pyodide's Python 3.14 (the in-browser calculators).
"""

__version__ = "0.1.0"
