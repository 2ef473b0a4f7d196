"""Imports the package itself, the way toolc's api once took __version__ from toolc/__init__."""

from layered import VERSION

NAME = f"middle {VERSION}"
