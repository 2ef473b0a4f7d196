"""Layers, top first: top, middle, bottom."""

VERSION = "0"
