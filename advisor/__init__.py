"""GPU Advisor: memory, compute-time, cost and recommendation models for AI accelerators.

Pure Python (the standard library, PyYAML, Jinja2 and MarkupSafe, all pure or with a pure
fallback): the same code runs in CPython 3.11 (CLI, tests, site build)
and in Pyodide's Python 3.14 (the in-browser calculators).
"""

__version__ = "0.1.0"

# Not imported by the calculators: the terminal's CLI (advisor.__main__ would run it).
_TERMINAL_ONLY = ("advisor.__main__", "advisor.cli", "advisor.commands")


def module_names() -> list[str]:
    """Every module and sub-package of advisor that the calculators may import, sorted: the
    Pyodide snapshot imports them all (calcruntime/node/pyodide_snapshot.mjs), the dataclass code is
    recorded for them (calcruntime/node/pyodide_dataclass_code.mjs). Read from the files, so it also
    works on the compiled copy (.pyc only); no package is imported to list it."""
    import os
    import pkgutil

    out: list[str] = []

    def walk(path: str, prefix: str) -> None:
        for m in pkgutil.iter_modules([path], prefix):
            if m.name in _TERMINAL_ONLY:
                continue
            out.append(m.name)
            if m.ispkg:
                walk(os.path.join(path, m.name.rsplit(".", 1)[1]), m.name + ".")

    walk(__path__[0], "advisor.")
    return sorted(out)
