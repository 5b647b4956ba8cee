"""C++ symbol names (Itanium ABI, ``_Z...``) as a demangler prints them: ``_ZN2at6native...embedding_backward_feature_kernelIffEEvPlPKT_PS4_ili``
-> ``void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float>(long*, float const*, ...)``,
the form an Nsight Systems export's ``demangledName``, Kineto and the Visual Profiler show.

Why: a profiler that stores kernels by their mangled symbol only (nvprof's database) would otherwise give every rule
that reads a kernel's namespace or template arguments (ATen's ``at::native::``, cuDNN's, a dtype) a name none of them
matches.  The C++ runtime's own demangler (``__cxa_demangle``, in libstdc++ / libc++abi) is asked through ctypes; where
it cannot be loaded, or a name is not a well-formed symbol, the name is kept as written.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re

#: A mangled symbol: ``_Z`` then the characters a symbol is made of; longer ones are kept as written (the runtime's
#: demangler recurses on nesting, and no kernel name is this long).
_SYMBOL = re.compile(r"_Z[A-Za-z0-9_$.]+")
_MAX_CHARS = 8192


@functools.lru_cache(maxsize=1)
def _runtime():  # noqa: ANN202 - (demangle function, free function) or None
    for name in ("stdc++", "c++abi", "c++"):
        path = ctypes.util.find_library(name)
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            fn = lib.__cxa_demangle
            libc = ctypes.CDLL(ctypes.util.find_library("c"))
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
        libc.free.argtypes = [ctypes.c_void_p]
        libc.free.restype = None
        return fn, libc.free
    return None


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """``name`` demangled where it is a mangled C++ symbol the runtime's demangler reads, else ``name`` itself."""
    if len(name) > _MAX_CHARS or not _SYMBOL.fullmatch(name):
        return name
    runtime = _runtime()
    if runtime is None:
        return name
    fn, free = runtime
    status = ctypes.c_int(-1)
    out = fn(name.encode("ascii"), None, None, ctypes.byref(status))
    if not out:
        return name
    try:
        text = ctypes.string_at(out).decode("utf-8", "replace") if status.value == 0 else ""
    finally:
        free(out)
    return text or name
