"""References for testing fp8mlir on a GPU (not imported by the package).

Modules here may import torch; ``import fp8mlir`` never imports them.
"""
