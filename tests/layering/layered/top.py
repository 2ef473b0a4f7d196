"""The top layer: may import everything below it."""

from layered import bottom

DEPTH = bottom.DEPTH + 1
