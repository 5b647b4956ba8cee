"""Vendor-neutral codes of the device stage: event kinds, precisions, kernel classes, and how much of a name is read."""

from __future__ import annotations

import functools
import re

#: Kernel kind codes (int8 arrays).  ``KIND_MEMSET``: the GPU filling its own memory (``cudaMemset``, ROCm's
#: ``FillBuffer``), no transfer -- a kind of its own, not a device-to-device copy: the ledger books it as ``memset``
#: and the copies finding calls it a fill, so one quantity has one name on every screen (h37-fill30).
KIND_KERNEL, KIND_H2D, KIND_D2H, KIND_D2D, KIND_COLLECTIVE, KIND_OTHER_COPY, KIND_MEMSET = 0, 1, 2, 3, 4, 5, 6

#: ``unknown``: the name carries no dtype (XLA fusions, Triton GEMMs, ``Memset``): a value of its own, never fp32.
PRECISIONS = ("fp32", "fp16", "bf16", "int8", "fp8", "tf32", "fp64", "other", "unknown")
P_FP32, P_FP16, P_BF16, P_INT8, P_FP8, P_TF32, P_FP64, P_OTHER, P_UNKNOWN = range(9)
#: Precisions of 16 bits or fewer (what mixed precision aims for).
LOW_PRECISIONS = ("fp16", "bf16", "int8", "fp8")

#: Bits of one element of each precision code that has a fixed width.
ELEMENT_BITS = {"fp64": 64, "fp32": 32, "tf32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8}
#: Tensor Core GEMMs want every dimension and leading dimension a multiple of 16 bytes (128 bits): NVIDIA cuBLAS
#: documentation, section "Tensor Core Usage" (https://docs.nvidia.com/cuda/cublas/index.html#tensor-core-usage),
#: and the cuDNN / "Matrix Multiplication Background" performance guides (fp16: 8 elements, int8: 16).
TC_ALIGN_BYTES = 16


def tc_align_elements(precision: str) -> int | None:
    """How many elements of ``precision`` a Tensor Core GEMM's dims should be a multiple of (fp16/bf16: 8, tf32: 4 --
    stored in 32 bits --, fp8/int8: 16); None for a precision of no fixed width."""
    bits = ELEMENT_BITS.get(precision)
    return TC_ALIGN_BYTES * 8 // bits if bits else None


#: Names are classified by their first ``MAX_CLASSIFIED_CHARS`` characters only (real kernel names are a few
#: hundred characters; the longest in the real captures is 523).  With every regex here linear, this bounds
#: the work per distinct name whatever a file holds: an 80 kB ``hlo_op`` or kernel name costs what 4 kB do.
MAX_CLASSIFIED_CHARS = 4096


def head(name: str) -> str:
    """The part of a name the classifiers look at (see ``MAX_CLASSIFIED_CHARS``)."""
    return name if len(name) <= MAX_CLASSIFIED_CHARS else name[:MAX_CLASSIFIED_CHARS]


def replace_each(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """``text`` with each (theirs, ours) pair replaced in order: a vendor's words for NVIDIA's (``WORDS``), its
    device's spelling in code; longer phrases come first in a table, so "Tensor Cores" is read before "Tensor Core"."""
    for theirs, ours in pairs:
        text = text.replace(theirs, ours)
    return text


def replace_once(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """``text`` with each (theirs, ours) pair replaced in ONE pass, the first pair that matches at a place winning:
    for a table whose words reappear in its own replacements (``unknown.DEVICES``: ``CudaDevice`` inside "a GPU device
    (CudaDevice(id=0), ...)"), which :func:`replace_each` would replace again -- a JAX window on an unnamed GPU was told
    to expect "a GPU device (a GPU device (CudaDevice, RocmDevice, ...)(id=0), RocmDevice(id=0), ...)" (h37-window69)."""
    if not pairs:
        return text
    ours = dict(pairs)
    return re.compile("|".join(re.escape(theirs) for theirs, _ in pairs)).sub(lambda m: ours[m.group(0)], text)


#: C++'s name for an unnamed namespace inside a demangled name (``at::native::(anonymous namespace)::...``): a
#: parenthesis that is no argument list, dropped before a name's own function is read (:func:`function_parts`,
#: ``nvidia._own_function``, ``devices.short_kernel_name``).
ANON_NS = "(anonymous namespace)::"


#: kernel classes of a report's ``kernel_classes`` summary (and the diff's kernel-class changes)
KERNEL_CLASSES = ("matmul/conv", "elementwise", "reduction", "collective", "other")


#: The length that opens each part of an Itanium-mangled nested name (``_ZN5aiter33fp8gemm_...E``).
_SOURCE_NAME = re.compile(r"\d+")


def plain_mangled_name(name: str) -> str:
    """``aiter::fp8gemm_bf16_blockscale_32x128`` for ``_ZN5aiter33fp8gemm_bf16_blockscale_32x128E``: the qualified name of
    an Itanium-mangled name that is a plain nested name and nothing more (no template arguments, no parameter list:
    an assembly kernel's symbol, maybe with its code object's ``.kd``), each part its length then its characters
    (:func:`_mangled_parts`, read to the name's end); "" for any other name.  Read left to right once: linear in the
    name."""
    if not name.startswith("_ZN"):
        return ""
    body = name[3:].removesuffix(".kd")
    if not body.endswith("E"):
        return ""
    parts, end = _mangled_parts(body[:-1], 0)
    return "::".join(parts) if end == len(body) - 1 else ""


#: Itanium's one-letter builtin types (the C++ ABI's <builtin-type>), as a demangler prints them.
_BUILTIN_TYPES = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
                  "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
                  "x": "long long", "y": "unsigned long long", "f": "float", "d": "double"}


def _mangled_parts(body: str, i: int) -> tuple[list[str], int]:
    """The <source-name> parts from ``body[i]`` on (each its length, then its characters) and where they stop."""
    parts = []
    while (n := _SOURCE_NAME.match(body, i)) is not None:
        size, i = int(n.group(0)), n.end()
        part = body[i:i + size]
        if size <= 0 or len(part) < size or not part.isidentifier():
            return [], -1
        parts.append(part)
        i += size
    return parts, i


def mangled_template_head(name: str) -> tuple[str, str] | None:
    """(``vllm::reshape_and_cache_kernel``, ``unsigned short``) for ``_ZN4vllm24reshape_and_cache_kernelIttLb0EEEv...``:
    an Itanium-mangled function template's qualified name and its first template argument as a demangler prints it,
    where that argument is a builtin type (``t``), a name (``13__nv_bfloat16``) or a nested name (``N3c104HalfE``);
    None for anything else.  Why: a trace that keeps mangled names (a tool that does not demangle) hides the element
    type a kernel template names, which its demangled twin shows (``reshape_and_cache_kernel<unsigned short, ...>``).
    Read left to right once, no substitution followed: linear in the name."""
    if not name.startswith("_Z"):
        return None
    nested = name.startswith("_ZN")
    parts, i = _mangled_parts(name, 3 if nested else 2)
    if not parts or name[i:i + 1] != "I":
        return None
    i += 1
    if name[i:i + 1] in _BUILTIN_TYPES:
        first = _BUILTIN_TYPES[name[i]]
    elif name[i:i + 1] == "N":
        inner, j = _mangled_parts(name, i + 1)
        if not inner or name[j:j + 1] != "E":
            return None
        first = "::".join(inner)
    else:
        inner, _ = _mangled_parts(name, i)
        if len(inner) < 1:
            return None
        first = inner[0]
    return "::".join(parts), first


#: Itanium's two-letter builtin types a kernel's element type may be (``Dh``: IEEE half, ``DF16_``: ``_Float16``,
#: ``DF16b``: ``std::bfloat16_t``), as a demangler prints them.
_BUILTIN_PAIRS = {"Dh": "half", "DF16_": "_Float16", "DF16b": "std::bfloat16_t"}
#: Type qualifiers and pointers: read, then the type they qualify (``IKfE`` is ``<float const>``).
_QUALIFIERS = {"K": " const", "V": " volatile", "r": " restrict", "P": "*", "R": "&", "O": "&&"}
#: A substitution (``S_``, ``S0_``; ``St``: ``std::``) or template parameter (``T_``, ``T1_``) of a mangled name.
_SUBSTITUTION = re.compile(r"[ST][0-9A-Z]*_|St")
#: How deep templates inside template arguments are read (cuBLAS's ``cublasGemvParamsEx<int,
#: cublasGemvTensorStridedBatched<float const>, ...>`` is 2); deeper ones end the reading.
_MAX_TEMPLATE_DEPTH = 4


def _mangled_type(name: str, i: int, depth: int) -> tuple[str, int]:
    """One <type> or <template-arg> of an Itanium-mangled name from ``name[i]`` on, as a demangler would print it
    (a substitution ``S_`` or template parameter ``T_`` it cannot resolve without the whole name is ``?``, a literal
    ``Lb0E`` / ``Li6E`` is ``literal``), and where it stops; ("", -1) for a form it does not read (an expression)."""
    ch = name[i:i + 1]
    for code, spelled in _BUILTIN_PAIRS.items():
        if name.startswith(code, i):
            return spelled, i + len(code)
    if ch in _BUILTIN_TYPES:
        return _BUILTIN_TYPES[ch], i + 1
    if ch in _QUALIFIERS:
        inner, j = _mangled_type(name, i + 1, depth)
        return (inner + _QUALIFIERS[ch], j) if j >= 0 else ("", -1)
    if ch in "ST" and (m := _SUBSTITUTION.match(name, i)) is not None and m.group(0) != "St":
        return _with_arguments(name, "?", m.end(), depth)
    if ch == "L":
        end = name.find("E", i)
        return ("literal", end + 1) if end > i + 1 and name[i + 1] != "Z" else ("", -1)
    if ch == "N":
        return _nested_type(name, i + 1, depth)
    std = name.startswith("St", i)
    parts, j = _mangled_parts(name, i + 2 if std else i)
    if not parts:
        return "", -1
    return _with_arguments(name, "::".join((["std"] if std else []) + parts), j, depth)


def _nested_type(name: str, i: int, depth: int) -> tuple[str, int]:
    """A nested name from ``name[i]`` (just past its ``N``) to its ``E``: its parts (a substitution ``S0_`` is ``?``,
    ``St`` is ``std``), each maybe a template (``N3c107complexIfEE`` is ``c10::complex<float>``), and where it stops."""
    parts: list[str] = []
    while i < len(name) and name[i] != "E":
        if (m := _SUBSTITUTION.match(name, i)) is not None:
            parts.append("std" if m.group(0) == "St" else "?")
            i = m.end()
        elif name[i] == "I" and parts:
            parts[-1], i = _with_arguments(name, parts[-1], i, depth)
            if i < 0:
                return "", -1
        else:
            read, i = _mangled_parts(name, i)
            if not read:
                return "", -1
            parts.extend(read)
    return ("::".join(parts), i + 1) if parts and i < len(name) else ("", -1)


def _with_arguments(name: str, qualified: str, i: int, depth: int) -> tuple[str, int]:
    """``qualified`` with the template arguments that open at ``name[i]`` (an ``I``), if any, and where they stop."""
    if name[i:i + 1] != "I":
        return qualified, i
    if depth >= _MAX_TEMPLATE_DEPTH:
        return "", -1
    arguments, j = _mangled_arguments(name, i + 1, depth + 1)
    return (f"{qualified}<{', '.join(arguments)}>", j) if j >= 0 else ("", -1)


def _mangled_arguments(name: str, i: int, depth: int) -> tuple[list[str], int]:
    """The template arguments from ``name[i]`` (just past an ``I``) to their ``E``, and where they stop (-1: a form
    this reader does not read came first; the arguments before it are returned)."""
    arguments: list[str] = []
    while i < len(name) and name[i] != "E":
        argument, i = _mangled_type(name, i, depth)
        if i < 0:
            return arguments, -1
        arguments.append(argument)
    return arguments, (i + 1 if i < len(name) else -1)


def mangled_template_text(name: str) -> str:
    """``internal::gemvx::kernel<int, int, float, float, float, float, literal, ...>`` for
    ``_ZN8internal5gemvx6kernelIiiffffLb0E...``: an Itanium-mangled function template's qualified name and its
    template arguments as a demangler prints them (those read before a form this reader does not read: an expression,
    a substitution is ``?``), "" for a name that is not one.  Why: a trace that keeps mangled names hides the element
    types a kernel template names -- cuBLAS's mangled ``gemvx`` read no precision where its demangled twin
    (``kernel<int, int, float, ...>``) reads fp32 (h37-kernelfam3 *Left*).  Read left to right once, nesting bounded
    (``_MAX_TEMPLATE_DEPTH``): linear in the name."""
    h = head(name)
    if not h.startswith("_Z"):
        return ""
    nested = h.startswith("_ZN")
    parts, i = _mangled_parts(h, 3 if nested else 2)
    if not parts or h[i:i + 1] != "I":
        return ""
    arguments, _ = _mangled_arguments(h, i + 1, 1)
    return f"{'::'.join(parts)}<{', '.join(arguments)}>" if arguments else ""


def without_templates(text: str, mark: str = "", stop_at_arguments: bool = False) -> str:
    """``text`` with every ``<...>`` (nested ones included) dropped -- each outermost one written as ``mark`` --, and,
    where ``stop_at_arguments``, cut at the first ``(`` outside them (the parameter list).  One pass, linear in the
    text.  Why one walk: a kernel's own function (:func:`function_parts`) and its short display name
    (``devices.short_kernel_name``: ``<…>`` for its templates) read the same bracket depth (h37-review26 *Left* 3).
    Inside a template a parenthesised expression's ``<`` and ``>`` compare, never bracket: vLLM's
    ``std::enable_if<(((8)>(0)))&&..., void>::type vllm::fused_add_rms_norm_kernel<...>(...)`` read as
    ``std::enable_if`` when its ``(8)>(0)`` closed the template (h37-tidy27)."""
    depth, paren, out = 0, 0, []
    for ch in text:
        if depth and ch in "()":
            paren = paren + 1 if ch == "(" else max(0, paren - 1)
        elif paren:
            continue
        elif ch == "<":
            if depth == 0 and mark:
                out.append(mark)
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0 and stop_at_arguments:
            break
        elif depth == 0:
            out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def function_parts(name: str) -> tuple[str, ...]:
    """The parts of a kernel's own qualified function name, whatever comes before it or after it:
    ``("internal", "gemvx", "kernel")`` for ``std::enable_if<!T7, void>::type internal::gemvx::kernel<int, ...>(...)``
    and for its mangled twin ``_ZN8internal5gemvx6kernelIiiff...``; ``("gemv2T_kernel_val",)`` for
    ``void gemv2T_kernel_val<int, int, float, ...>(...)``.  Template arguments, the parameter list, C++'s unnamed
    namespace and a return type (``void``, an ``enable_if``'s ``::type``) are dropped: a library's type names inside
    them (cuBLAS's ``cublasGemvTensorStridedBatched`` in its small-N GEMMs' templates) say nothing of the function.
    A mangled name reads as its leading source names; () where none can be read."""
    h = head(name).strip()
    if h.startswith("_Z"):
        parts, _ = _mangled_parts(h, 3 if h.startswith("_ZN") else 2)
        return tuple(parts)
    own = without_templates(h.replace(ANON_NS, ""), stop_at_arguments=True).strip().rsplit(" ", 1)[-1]
    return tuple(p for p in own.split("::") if p)


def own_function(name: str) -> str:
    """The last part of a kernel's own function name (:func:`function_parts`), "" where none can be read:
    ``dynamic_scaled_int8_quant_kernel`` for ``void vllm::dynamic_scaled_int8_quant_kernel<...>(...)``, for
    ``std::enable_if<...>::type vllm::...`` and for its mangled twin.  Why one reader: the vendors' tests of what a
    kernel's own function names (NVIDIA's data movement, quantizing and product words, ggml's kernels) each cut the
    name their own way, and a return type or a mangled symbol read as the function in some and not in others
    (h37-review26 *Left* 2)."""
    parts = function_parts(name)
    return parts[-1] if parts else ""
