# The extension strata._native is built by cffi (build_ffi.py) from the core's C sources.
from setuptools import setup

setup(cffi_modules=["build_ffi.py:ffibuilder"])
