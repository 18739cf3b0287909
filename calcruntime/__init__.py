"""The calculators' runtime: everything that makes advisor run in the reader's browser, build
side and browser side next to each other (import-cheap: shipped into Pyodide with
`pyodide/`).

- `build/`: the Python the site build runs (mkdocs hook `build/mkdocs_hook.py`): the Pyodide
  runtime files, the advisor wheel and its dependencies' wheels, their compiled copies, the lock
  file, the standard-library zips, the memory snapshot, the prerendered calculators.
- `browser/`: the files the site serves as `assets/calc/` (`docs/assets/calc` is a link to this
  folder, so the URLs stay): boot.js, loader.mjs, calc.mjs, render.mjs, worker.mjs, unzip.mjs,
  sparse.mjs, calc.css.
- `node/`: the build's Node scripts (compile bytecode, record the dataclass code, find the
  standard-library modules in use, make the snapshot, prerender, run calls for the tests) and
  the Python they run inside Pyodide (`pyodide_bytecode.py`).
- `pyodide/`: Python that runs inside Pyodide at the plain start (`codecache`: the dataclass
  code table), shipped beside advisor in its compiled copy, not in the advisor wheel.
"""
