"""Integer helpers shared by the package (no dependencies)."""


def ceil_div(a, b):
    """ceil(a / b) for integers, b > 0."""
    return -(-a // b)
