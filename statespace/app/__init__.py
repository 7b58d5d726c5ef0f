"""The application: the ``statespace`` command line and the lab.

- :mod:`~statespace.app.cli`: ``statespace compare``, ``rate``, ``data``, ``study`` and ``lab``
  (:mod:`~statespace.app.cli_output`, :mod:`~statespace.app.study_cli`); user errors print one
  line and exit 2.
- :mod:`~statespace.app.lab`: the web lab (FastAPI), an optional extra.

Imports: any room below. Nothing imports the application.
"""
