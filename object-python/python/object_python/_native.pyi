# The extension module behind the package: its public names are the package's (see
# `__init__.pyi`); the rest is internal, typed `Any` here.
from typing import Any

def __getattr__(name: str) -> Any: ...
