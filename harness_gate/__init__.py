"""harness-gate: a Git-native gate for planned, approved and verified work."""

__version__ = "0.1.0"
