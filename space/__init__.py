"""The Space's own code beside build.py: the setup-command generator that the page runs under Pyodide."""
