"""A package that breaks the layering on purpose: tests/test_layers.py's negative case."""
