"""C++ symbol names (Itanium ABI, ``_Z...``) as a demangler prints them: ``_ZN2at6native...embedding_backward_feature_kernelIffEEvPlPKT_PS4_ili``
-> ``void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float>(long*, float const*, ...)``,
the form an Nsight Systems export's ``demangledName``, Kineto and the Visual Profiler show.

Why: a profiler that stores kernels by their mangled symbol only (nvprof's database) would otherwise give every rule
that reads a kernel's namespace or template arguments (ATen's ``at::native::``, cuDNN's, a dtype) a name none of them
matches.  The C++ runtime's own demangler (``__cxa_demangle``, in libstdc++ / libc++abi) is asked through ctypes.

Why in a child process: a symbol is text from the file, and the demangler prints every back-reference in full, so a
few hundred hostile characters (``pair<S0_, S0_>`` nested 30 deep: each level a back-reference to the last, twice)
print 2^30 times over -- gigabytes and minutes inside one C call that Python cannot interrupt.  The names are
demangled in one child per read, under an address-space limit (the demangler's allocation then fails and it answers
"not demangled") and a time limit.  A name the child did not answer is kept as written, and the child is started
again after it.  Where the child cannot be run or bounded (no ``resource`` module: Windows), names are kept as
written -- the dtype readers read mangled names too (``devices.element_types``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import selectors
import subprocess
import sys
from collections.abc import Iterable

#: A mangled symbol: ``_Z`` then the characters a symbol is made of; longer ones are kept as written (no kernel name
#: is this long).
_SYMBOL = re.compile(r"_Z[A-Za-z0-9_$.]+")
_MAX_CHARS = 8192
#: A demangled name longer than this is kept mangled: the printed form of a real kernel is a few times its symbol.
_MAX_OUT_CHARS = 16 * _MAX_CHARS
#: The child's address space and CPU time: far above what a real file's names need (microseconds each).
_CHILD_BYTES = 1 << 30
_CHILD_SECONDS = 60
#: How long the child may take to start (to say it is ready: :data:`_READY`), and then to give each answer: a name
#: that takes longer (a hostile one is exponential in time as well as in text) is kept as written.  The start's wait
#: is the interpreter's start-up alone: a hostile first name waited it out too (20 s, not 2 s: h37-speed60).
_START_SECONDS = 20.0
_ANSWER_SECONDS = 2.0
#: The child's first line, once it has its C++ runtime and before its first answer (an answer is never empty).
_READY = b"\n"
#: Children started for one read before the rest of the names are kept as written.
_MAX_CHILDREN = 4


def _runtime():  # -> (demangle function, free function) or None
    """The C++ runtime's ``__cxa_demangle`` and libc's ``free`` (the child's side)."""
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


def _one(runtime, name: str) -> str:  # runtime: the pair _runtime returns
    """``name`` demangled by ``runtime`` in this process (the child's side), else ``name``."""
    fn, free = runtime
    status = ctypes.c_int(-1)
    out = fn(name.encode("ascii"), None, None, ctypes.byref(status))
    if not out:
        return name
    try:
        text = ctypes.string_at(out).decode("utf-8", "replace") if status.value == 0 else ""
    finally:
        free(out)
    return text if text and len(text) <= _MAX_OUT_CHARS and "\n" not in text else name


def _answered(names: list[str]) -> list[str]:
    """What one child answered for ``names``, in order: as many answers as it gave, each within
    :data:`_ANSWER_SECONDS` of the last (the first of its ready line, itself within :data:`_START_SECONDS`), before
    it ended or was stopped."""
    child = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    answers: list[str] = []
    try:
        child.stdin.write(("\n".join(names) + "\n").encode("ascii"))  # read whole by the child before it answers
        child.stdin.close()
        with selectors.DefaultSelector() as sel:
            sel.register(child.stdout, selectors.EVENT_READ)
            buf, ready = b"", False
            while len(answers) < len(names):
                if not sel.select(_ANSWER_SECONDS if ready else _START_SECONDS):
                    break  # this name takes too long (or the child to start): stopped, kept as written
                chunk = os.read(child.stdout.fileno(), 1 << 16)
                if not chunk:
                    break  # the child ended (its memory limit): this name is kept as written
                if not ready:
                    ready, chunk = True, chunk[len(_READY):]
                *lines, buf = (buf + chunk).split(b"\n")
                answers += [line.decode("utf-8", "replace") for line in lines]
    except OSError:
        pass
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    return answers[:len(names)]


def demangle_all(names: Iterable[str]) -> dict[str, str]:
    """Every distinct name of ``names`` -> its demangled form (the name itself where it is no mangled symbol, the
    demangler did not read it, or it could not be demangled safely)."""
    out = {n: n for n in names}
    todo = sorted(n for n in out if len(n) <= _MAX_CHARS and _SYMBOL.fullmatch(n))
    try:
        import resource  # noqa: F401 - the child's limits need it
    except ImportError:
        return out
    for _ in range(_MAX_CHILDREN):
        if not todo:
            break
        try:
            answers = _answered(todo)
        except OSError:
            break
        for name, text in zip(todo, answers):
            out[name] = text or name
        todo = todo[len(answers) + 1:]  # the name the child did not answer is kept as written
    return out


def _serve() -> None:  # pragma: no cover - the child: one name per line in, its demangled form per line out
    """The child: bounds itself (its own limits, not the parent's ``preexec_fn``, which is unsafe in a threaded
    server), then answers one line per name."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_BYTES, _CHILD_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (_CHILD_SECONDS, _CHILD_SECONDS))
    runtime = _runtime()
    names = sys.stdin.read().split("\n")[:-1]
    sys.stdout.buffer.write(_READY)
    sys.stdout.flush()
    for name in names:
        sys.stdout.write((_one(runtime, name) if runtime and _SYMBOL.fullmatch(name) else name) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover - started by _answered
    _serve()
