"""FP8-MLIR Python package.

Submodules are imported on demand; importing the package does not import
torch or load any native library.
"""
