"""The package version, in a module of its own so that any module can read it without importing
the package root (which loads the fronts) and pyproject.toml can take it from here."""
__version__ = "0.1.0"
