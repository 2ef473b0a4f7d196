"""The bottom layer, importing the top one: an upward import and an import cycle."""

DEPTH = 0


def height() -> int:
    from layered import top  # noqa: PLC0415

    return top.DEPTH
