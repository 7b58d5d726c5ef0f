"""The application: the ``statespace`` command line and the lab.

- :mod:`~statespace.app.cli`: the ``statespace`` command's parser and ``main`` (user errors print
  one line and exit 2, Ctrl-C 130); one module a command: :mod:`~statespace.app.compare_cli`,
  :mod:`~statespace.app.rate_cli`, :mod:`~statespace.app.listings_cli` (datasets, scenarios,
  methods), :mod:`~statespace.app.study_cli`; what they share: :mod:`~statespace.app.cli_games`
  (the games a command reads), :mod:`~statespace.app.cli_auto` (how ``--auto``'s choice is said)
  and :mod:`~statespace.app.cli_output` (tables, numbers, plots).
- :mod:`~statespace.app.lab`: the web lab (FastAPI), an optional extra.

Imports: any room below. Nothing imports the application.
"""
