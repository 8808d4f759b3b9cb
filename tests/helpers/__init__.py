"""Shared test helpers: the official-schema checker and the ``ClientServerPair``.

Importable as ``helpers`` because ``tests/`` (which holds ``conftest.py`` and
no ``__init__.py``) is on ``sys.path`` under pytest's default import mode.
"""
