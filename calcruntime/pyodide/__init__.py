"""Python that runs inside Pyodide at the calculators' plain start, shipped beside advisor in its
compiled copy (calcruntime/build/wheels.py `CODECACHE_FILES`)."""
