"""The commands, one module each, each returning a Report; cli.py and entry.py import them
lazily (importing this package imports none of them: the hook path stays lean)."""
