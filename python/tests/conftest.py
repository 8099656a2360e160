import sys
from pathlib import Path

# The package from this source tree.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU, torch and libfp8rt.so")
