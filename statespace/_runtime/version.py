"""The package's version (``statespace --version``, ``statespace.__version__``); pyproject.toml
states the same number for the installer."""

__version__ = "0.1.0"
