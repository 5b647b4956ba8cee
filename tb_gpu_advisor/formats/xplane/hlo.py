"""XLA's HLO in a capture: each compiled module's ``Hlo Proto``, read from field numbers, and the FLOPs of its program.

JAX and TensorFlow's XLA write the optimized HLO of every module they compiled into the capture, as the bytes stat
``Hlo Proto`` of the module's event metadata on the ``/host:metadata`` plane (an ``xla.HloProto``).  Its shapes and
dimension numbers give the FLOPs of each matmul, convolution and fused attention -- what no kernel name says.

The schema is built at run time from field numbers, as ``schema.py`` builds XSpace's (the facts of
``xla/service/hlo.proto`` and ``xla/xla_data.proto`` in openxla/xla; only the fields read here), and parsed by
protobuf's upb (without protobuf, by ``formats/protomsg.py``).  The formulas and XLA's library-call names are
``frameworks/xla.py``'s; this module walks the program: which computations run and how often (``while`` bodies
``known_trip_count`` times), which instruction of the executed program a kernel names (a fusion, for the dots inside
it), and what each moves.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tb_gpu_advisor.formats import protomsg
from tb_gpu_advisor.formats.xplane.schema import DECODE_ERRORS, build_classes, from_bytes
from tb_gpu_advisor.frameworks import xla

_OPT, _REP = protomsg.LABEL_OPTIONAL, protomsg.LABEL_REPEATED
_I64, _I32 = protomsg.TYPE_INT64, protomsg.TYPE_INT32
_STR, _BYTES, _MSG = protomsg.TYPE_STRING, protomsg.TYPE_BYTES, protomsg.TYPE_MESSAGE

#: Field numbers of package ``xla`` (xla/service/hlo.proto, xla/xla_data.proto); enums read as int32.
_MESSAGES: dict[str, list[tuple[str, int, int, int, str | None]]] = {
    "ShapeProto": [
        ("element_type", 2, _I32, _OPT, None),  # PrimitiveType
        ("dimensions", 3, _I64, _REP, None),
        ("tuple_shapes", 4, _MSG, _REP, "ShapeProto"),
    ],
    "DotDimensionNumbers": [
        ("lhs_contracting_dimensions", 1, _I64, _REP, None),
        ("rhs_contracting_dimensions", 2, _I64, _REP, None),
        ("lhs_batch_dimensions", 3, _I64, _REP, None),
        ("rhs_batch_dimensions", 4, _I64, _REP, None),
    ],
    "ConvolutionDimensionNumbers": [
        ("input_batch_dimension", 7, _I64, _OPT, None),
        ("kernel_input_feature_dimension", 3, _I64, _OPT, None),
        ("kernel_output_feature_dimension", 4, _I64, _OPT, None),
        ("kernel_spatial_dimensions", 6, _I64, _REP, None),
    ],
    "ReplicaGroup": [("replica_ids", 1, _I64, _REP, None)],
    "IotaReplicaGroupListProto": [
        ("num_replica_groups", 1, _I64, _OPT, None),
        ("num_devices_per_group", 2, _I64, _OPT, None),
    ],
    "CollectiveDeviceListProto": [
        ("replica_groups", 1, _MSG, _REP, "ReplicaGroup"),
        ("iota_replica_group_list", 2, _MSG, _OPT, "IotaReplicaGroupListProto"),
    ],
    "SourceTarget": [("source", 1, _I64, _OPT, None), ("target", 2, _I64, _OPT, None)],
    "HloInstructionProto": [
        ("name", 1, _STR, _OPT, None),
        ("opcode", 2, _STR, _OPT, None),
        ("shape", 3, _MSG, _OPT, "ShapeProto"),
        ("convolution_dimension_numbers", 16, _MSG, _OPT, "ConvolutionDimensionNumbers"),
        ("custom_call_target", 28, _STR, _OPT, None),
        ("dot_dimension_numbers", 30, _MSG, _OPT, "DotDimensionNumbers"),
        ("feature_group_count", 50, _I64, _OPT, None),  # 0 (unset) reads as XLA's default, 1
        ("batch_group_count", 58, _I64, _OPT, None),
        ("id", 35, _I64, _OPT, None),
        ("operand_ids", 36, _I64, _REP, None),
        ("called_computation_ids", 38, _I64, _REP, None),
        ("backend_config", 43, _BYTES, _OPT, None),
        ("replica_groups", 49, _MSG, _REP, "ReplicaGroup"),  # deprecated for collective_device_list
        ("source_target_pairs", 52, _MSG, _REP, "SourceTarget"),
        ("collective_device_list", 87, _MSG, _OPT, "CollectiveDeviceListProto"),
        ("metadata", 7, _MSG, _OPT, "OpMetadata"),
    ],
    "OpMetadata": [("op_name", 2, _STR, _OPT, None)],
    "HloComputationProto": [
        ("name", 1, _STR, _OPT, None),
        ("instructions", 2, _MSG, _REP, "HloInstructionProto"),
        ("id", 5, _I64, _OPT, None),
    ],
    "HloModuleProto": [
        ("name", 1, _STR, _OPT, None),
        ("entry_computation_name", 2, _STR, _OPT, None),
        ("computations", 3, _MSG, _REP, "HloComputationProto"),
        ("entry_computation_id", 6, _I64, _OPT, None),
    ],
    "HloProto": [("hlo_module", 1, _MSG, _OPT, "HloModuleProto")],
}
# Skim views: the module with its computations kept as bytes, and a computation's name and id alone.  The walk
# parses a computation only when it runs or its bytes hold an opcode with work (``_WORK_BYTES``): a big module's
# hundreds of element-wise fusions are never built as messages (3x faster on the real GPT capture).
_MESSAGES["HloComputationHead"] = [("name", 1, _STR, _OPT, None), ("id", 5, _I64, _OPT, None)]
_MESSAGES["HloModuleSkim"] = [
    (n, num, _BYTES, _REP, None) if n == "computations" else (n, num, t, lab, tn)
    for n, num, t, lab, tn in _MESSAGES["HloModuleProto"]
]
_MESSAGES["HloProtoSkim"] = [("hlo_module", 1, _MSG, _OPT, "HloModuleSkim")]

#: PrimitiveType (xla_data.proto) -> (XLA's name, bits per element).  TUPLE/OPAQUE/TOKEN hold no data here.
_DTYPES: dict[int, tuple[str, int]] = {
    1: ("pred", 8), 2: ("s8", 8), 3: ("s16", 16), 4: ("s32", 32), 5: ("s64", 64), 6: ("u8", 8), 7: ("u16", 16),
    8: ("u32", 32), 9: ("u64", 64), 10: ("f16", 16), 11: ("f32", 32), 12: ("f64", 64), 15: ("c64", 64),
    16: ("bf16", 16), 18: ("c128", 128), 19: ("f8e5m2", 8), 20: ("f8e4m3fn", 8), 21: ("s4", 4), 22: ("u4", 4),
    23: ("f8e4m3b11fnuz", 8), 24: ("f8e5m2fnuz", 8), 25: ("f8e4m3fnuz", 8), 26: ("s2", 2), 27: ("u2", 2),
    28: ("f8e4m3", 8), 29: ("f8e3m4", 8), 30: ("s1", 1), 31: ("u1", 1), 32: ("f4e2m1fn", 4), 33: ("f8e8m0fnu", 8),
}
_TUPLE = 13
#: Computation visits one module's walk may make, per computation it holds: a valid program visits each once;
#: a hostile call graph (a diamond of calls, each calling the next twice) would otherwise take exponential time.
_MAX_VISITS_PER_COMPUTATION = 4
#: Nesting of while/call/fusion computations followed; deeper is a corrupt (cyclic) program.
_MAX_DEPTH = 64


#: Opcodes of instructions with FLOPs of their own, and of those inside a fusion that hold more instructions.
_WORK_OPCODES = frozenset({xla.HLO_DOT, xla.HLO_CONVOLUTION, "custom-call"})
_NESTING_OPCODES = frozenset({xla.HLO_FUSION, "call"})
_FUSED_OPCODES = _WORK_OPCODES | _NESTING_OPCODES
#: Opcodes of the executed program's instructions that may stand for work (a fusion: for the dots inside it).
_ROW_OPCODES = _WORK_OPCODES | {xla.HLO_FUSION}
#: Those opcodes as a computation's bytes hold them (HloInstructionProto.opcode: field 2, length, text): a fused
#: computation without any of them has no work, and is not parsed.  (Other fields may hold the same bytes: then
#: the computation is parsed for nothing; an instruction with the opcode always holds them.)
def _opcode_bytes(opcodes: frozenset[str]) -> re.Pattern[bytes]:
    return re.compile(b"|".join(re.escape(b"\x12" + bytes([len(op)]) + op.encode()) for op in sorted(opcodes)))


_WORK_BYTES = _opcode_bytes(_FUSED_OPCODES)
#: A module whose bytes hold no opcode with FLOPs of its own nor a collective has nothing to read: it is not walked
#: (most modules of a capture are small element-wise programs: ``jit__normal``, ``jit_convert_element_type``...).
_MODULE_WORK_BYTES = _opcode_bytes(_WORK_OPCODES | xla.HLO_COLLECTIVES)


#: What the formulas raise on values no compiler writes (a dimension index out of range, a JSON list where an
#: object belongs, a dimension too big for a float): a corrupt module, reported as :class:`HloReadError`.
_HOSTILE = (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError, RecursionError)


class HloReadError(ValueError):
    """An ``Hlo Proto`` that is no readable HLO module (corrupt, foreign, or a program no compiler writes)."""


@functools.lru_cache(maxsize=1)
def _classes() -> dict[str, Any]:
    return build_classes("tb_gpu_advisor/hlo.proto", "tb_gpu_advisor.xla", _MESSAGES)


def message_class(name: str) -> Any:
    """The message class ``name`` of this schema (``"HloProto"``, ``"HloInstructionProto"``...), e.g. to write a
    module in a test."""
    return _classes()[name]


def parse_module(raw: bytes, skim: bool = False) -> Any:
    """The ``HloModuleProto`` of an ``Hlo Proto`` stat's bytes (with ``skim``, its computations as bytes);
    :class:`HloReadError` when it holds none."""
    try:
        msg = from_bytes(_classes()["HloProtoSkim" if skim else "HloProto"], raw)
    except (*DECODE_ERRORS, RecursionError, ValueError) as e:
        raise HloReadError(f"not an HloProto: {e}") from e
    if not msg.HasField("hlo_module") or not msg.hlo_module.computations:
        raise HloReadError("the HloProto holds no module")
    return msg.hlo_module


def _parse(name: str, raw: bytes) -> Any:
    try:
        return from_bytes(_classes()[name], raw)
    except (*DECODE_ERRORS, RecursionError, ValueError) as e:
        raise HloReadError(f"not an HLO computation: {e}") from e


# ---------------------------------------------------------------------------------------------- shapes

@dataclass(frozen=True)
class Array:
    """One array of an HLO shape: XLA's element type name (``bf16``; ``?`` unknown) and dimensions."""

    dtype: str
    dims: tuple[int, ...]
    bits: int = 0

    @property
    def nbytes(self) -> int:
        return (xla.numel(self.dims) * self.bits + 7) // 8

    def dims_text(self) -> str:
        return f"[{','.join(map(str, self.dims))}]"

    def text(self) -> str:
        return f"{self.dtype}{self.dims_text()}"


def arrays(shape: Any) -> list[Array]:
    """The arrays of a shape, tuple leaves in order (a token or opaque value holds none)."""
    out: list[Array] = []
    _leaves(shape, out, 0)
    return out


def _leaves(shape: Any, out: list[Array], depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise HloReadError("shape nested too deep")
    et = shape.element_type
    if et == _TUPLE:
        for s in shape.tuple_shapes:
            _leaves(s, out, depth + 1)
        return
    name, bits = _DTYPES.get(et, ("?", 0))
    if bits:
        out.append(Array(name, tuple(shape.dimensions), bits))


def shape_bytes(shape: Any, depth: int = 0) -> int:
    """Bytes of all the arrays of a shape (what :func:`arrays` would sum, without building them: the rows' traffic
    is summed over every operand)."""
    if depth > _MAX_DEPTH:
        raise HloReadError("shape nested too deep")
    et = shape.element_type
    if et == _TUPLE:
        return sum(shape_bytes(s, depth + 1) for s in shape.tuple_shapes)
    bits = _DTYPES.get(et, ("?", 0))[1]
    return (xla.numel(tuple(shape.dimensions)) * bits + 7) // 8 if bits else 0


def _array(shape: Any) -> Array:
    """The one array of an array shape; HloReadError for a tuple (a dot or convolution never has one)."""
    a = arrays(shape)
    if len(a) != 1 or shape.element_type == _TUPLE:
        raise HloReadError("expected an array shape")
    return a[0]


def _custom_call_result(shape: Any) -> list[Array]:
    """A library call's result arrays without its scratch buffer: XLA appends a rank-1 ``s8``/``u8`` workspace
    as the last element of the result tuple (cuBLAS, cuDNN)."""
    leaves = arrays(shape)
    if shape.element_type == _TUPLE and len(leaves) > 1 and leaves[-1].dtype in ("s8", "u8") and len(leaves[-1].dims) == 1:
        return leaves[:-1]
    return leaves


# ---------------------------------------------------------------------------------------------- FLOP rows

@dataclass
class FlopRow:
    """One instruction of a module's executed program that does matmul/conv/attention work (per execution)."""

    op_name: str  # as the kernels' ``hlo_op`` stat names it
    flops: float
    bytes: float  # operands + result, each moved once
    precision: int  # devices.codes P_* of the inputs
    kind: str  # model.trace.FLOP_KINDS
    label: str
    repeats: int = 1  # runs per module execution (while bodies)
    #: inside a ``conditional``'s branch (``lax.cond``/``lax.switch``): runs only in the executions that take it,
    #: so ``repeats`` is at most its runs (every branch of the conditional is counted as if it ran)
    branch: bool = False


@dataclass
class ModuleWork:
    """The FLOP rows and collective messages of one compiled module."""

    module: str  # as the kernels' ``hlo_module`` stat names it
    rows: list[FlopRow] = field(default_factory=list)
    unknown_loops: int = 0  # while loops with work inside whose trip count XLA did not prove: counted once
    #: collective instruction name -> (bytes of one rank's message, group size or -1)
    collectives: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: executed instruction that converts dtypes (a bare convert, or a fusion holding one) -> whether it does nothing
    #: else (:func:`convert_ops`); instructions without a convert are absent
    casts: dict[str, bool] = field(default_factory=dict)
    #: executed fusion -> the kernel class its fused opcodes state (:func:`fusion_classes`); fusions whose opcodes
    #: state none are absent
    classes: dict[str, str] = field(default_factory=dict)


@dataclass
class _Work:
    """The FLOPs of one dot / convolution / library call (inside a fusion or not)."""

    flops: float
    kind: str
    dtype: str
    what: str


class _Program:
    """One module's computations, for the walk: each parsed on first use, instruction maps and fusion work cached."""

    def __init__(self, skim: Any) -> None:
        self.skim = skim
        self.raw: dict[int, bytes] = {}
        self.names: dict[str, int] = {}
        for raw in skim.computations:
            head = _parse("HloComputationHead", raw)
            self.raw[head.id] = raw
            self.names.setdefault(head.name, head.id)
        self.last_id = head.id
        self._comps: dict[int, Any] = {}
        self._by_id: dict[int, dict[int, Any]] = {}
        self._fused: dict[int, list[_Work] | None] = {}
        self.visits = 0

    def comp(self, cid: int) -> Any:
        """Computation ``cid``, parsed; HloReadError for an id the module does not hold."""
        c = self._comps.get(cid)
        if c is None:
            raw = self.raw.get(cid)
            if raw is None:
                raise HloReadError(f"computation id {cid} not in the module")
            c = self._comps[cid] = _parse("HloComputationProto", raw)
        return c

    def entry(self) -> Any:
        """The entry computation: by name (unique in a module), else by id (0 is also the unset value), else the
        last (callees come before their callers)."""
        m = self.skim
        if m.entry_computation_name in self.names:
            return self.comp(self.names[m.entry_computation_name])
        return self.comp(m.entry_computation_id if m.entry_computation_id in self.raw else self.last_id)

    def operands(self, comp: Any, inst: Any) -> list[Any]:
        """The operand instructions of ``inst`` (in its computation)."""
        by_id = self._by_id.get(comp.id)
        if by_id is None:
            by_id = self._by_id[comp.id] = {i.id: i for i in comp.instructions}
        try:
            return [by_id[o] for o in inst.operand_ids]
        except KeyError as e:
            raise HloReadError(f"{inst.name}: operand id {e} not in computation {comp.name!r}") from e

    def called(self, inst: Any) -> list[Any]:
        return [self.comp(c) for c in inst.called_computation_ids]

    def visit(self) -> None:
        self.visits += 1
        if self.visits > _MAX_VISITS_PER_COMPUTATION * len(self.raw) + 16:
            raise HloReadError("the call graph reaches computations more often than a program can")

    def fused_work_of(self, inst: Any) -> list[_Work]:
        """The work inside the computations a fusion calls."""
        return [w for c in inst.called_computation_ids for w in self.fused_work(c, 1)]

    def fused_work(self, cid: int, depth: int) -> list[_Work]:
        """The dots, convolutions and library calls in fused computation ``cid`` and the fusions nested in it."""
        if cid in self._fused:
            got = self._fused[cid]
            if got is None:
                raise HloReadError(f"computation id {cid} calls itself")
            return got
        if depth > _MAX_DEPTH:
            raise HloReadError("fusions nested too deep")
        self.visit()
        raw = self.raw.get(cid)
        if raw is None:
            raise HloReadError(f"computation id {cid} not in the module")
        if _WORK_BYTES.search(raw) is None:
            self._fused[cid] = []
            return []
        self._fused[cid] = None  # in progress: a cycle back here is a corrupt program
        out: list[_Work] = []
        comp = self.comp(cid)
        for inst in comp.instructions:
            op = inst.opcode
            if op not in _FUSED_OPCODES:  # most fused instructions: element-wise, reductions, layout
                continue
            if op in _NESTING_OPCODES:
                for c in inst.called_computation_ids:
                    out.extend(self.fused_work(c, depth + 1))
                continue
            w = self.work(comp, inst)
            if w is not None:
                out.append(w)
        self._fused[cid] = out
        return out

    def work(self, comp: Any, inst: Any) -> _Work | None:
        """The FLOPs of one dot, convolution or matmul/conv/attention library call; None for other opcodes."""
        op = inst.opcode
        if op == xla.HLO_DOT:
            return _dot_work(inst, self.operands(comp, inst))
        if op == xla.HLO_CONVOLUTION:
            return _conv_work(inst, self.operands(comp, inst), (0, 1, -1), "convolution")
        if op == "custom-call":
            kind = xla.custom_call_kind(inst.custom_call_target)
            if kind is not None:
                return _custom_call_work(inst, self.operands(comp, inst), kind)
        return None


def _dot_work(inst: Any, ops: list[Any]) -> _Work:
    if len(ops) < 2:
        raise HloReadError(f"{inst.name}: a dot with {len(ops)} operands")
    lhs, rhs, res = _array(ops[0].shape), _array(ops[1].shape), _array(inst.shape)
    dn = inst.dot_dimension_numbers
    flops = xla.dot_flops(res.dims, lhs.dims, tuple(dn.lhs_contracting_dimensions))
    return _Work(flops, "matmul", lhs.dtype, f"dot {lhs.text()}x{rhs.dims_text()}")


def _conv_work(inst: Any, ops: list[Any], roles: tuple[int, int, int], what: str) -> _Work:
    """A convolution's FLOPs from its output and kernel arrays; ``roles``: (input, kernel, output) operand
    indices, -1 for the result's first array."""
    def pick(i: int) -> Array:
        if i < 0:
            res = _custom_call_result(inst.shape) if what != "convolution" else [_array(inst.shape)]
            if not res:
                raise HloReadError(f"{inst.name}: no result array")
            return res[0]
        if i >= len(ops):
            raise HloReadError(f"{inst.name}: a convolution with {len(ops)} operands")
        return _array(ops[i].shape)

    inp, kernel, out = (pick(i) for i in roles)
    dn = inst.convolution_dimension_numbers
    flops = xla.conv_flops(out.dims, kernel.dims, dn.kernel_input_feature_dimension, tuple(dn.kernel_spatial_dimensions))
    kind = "depthwise" if xla.depthwise_conv(inst.feature_group_count, inst.batch_group_count, inp.dims, kernel.dims,
                                             dn.input_batch_dimension, dn.kernel_input_feature_dimension) else "conv"
    return _Work(flops, kind, inp.dtype, f"{what} {inp.text()}*{kernel.dims_text()}")


def _custom_call_work(inst: Any, ops: list[Any], kind: str) -> _Work:
    target = inst.custom_call_target
    cfg = xla.backend_config(inst.backend_config)
    if kind == "conv":
        return _conv_work(inst, ops, xla.conv_roles(target), target)
    if len(ops) < (3 if kind == "attention" else 2):
        raise HloReadError(f"{inst.name}: {target} with {len(ops)} operands")
    a = [_array(o.shape) for o in ops[:3]]
    if kind == "attention":
        flops = xla.attention_flops(target, a[0].dims, a[1].dims, a[2].dims, cfg)
        return _Work(flops, "attention", a[0].dtype, f"{target} Q{a[0].text()} K{a[1].dims_text()} V{a[2].dims_text()}")
    dims = xla.gemm_dot_dims(cfg)
    res = _custom_call_result(inst.shape)
    if dims is None or not res:
        raise HloReadError(f"{inst.name}: {target} without dot dimension numbers or result")
    flops = xla.dot_flops(res[0].dims, a[0].dims, dims[0])
    return _Work(flops, "matmul", a[0].dtype, f"{target} {a[0].text()}x{a[1].dims_text()}")


def module_work(raw: bytes, fallback_name: str = "") -> ModuleWork:
    """The FLOP rows of one ``Hlo Proto`` -- each instruction of the executed program that does matmul/conv/attention
    work, a fusion standing for the dots inside it -- and its collectives' messages.  :class:`HloReadError` for a
    corrupt proto."""
    msg = parse_module(raw, skim=True)
    out = ModuleWork(module=msg.name or fallback_name)
    if _CONVERT_BYTES.search(raw) is not None:
        out.casts = convert_ops(_Program(msg))
    out.classes = fusion_classes(_Program(msg))
    if _MODULE_WORK_BYTES.search(raw) is None:
        return out
    prog = _Program(msg)
    rows: dict[str, FlopRow] = {}
    try:
        for comp, reps, branch in _executed(prog, out):
            for inst in comp.instructions:
                op = inst.opcode
                if op not in _ROW_OPCODES:
                    if op in xla.HLO_COLLECTIVES:
                        out.collectives[inst.name] = _collective(prog, comp, inst)
                    continue
                row = _row(prog, comp, inst)
                if row is None:
                    continue
                if row.op_name in rows:  # one computation reached twice: its instructions run twice as often
                    rows[row.op_name].repeats += reps
                    rows[row.op_name].branch &= branch  # reached outside a branch too: it always runs
                else:
                    row.repeats, row.branch = reps, branch
                    rows[row.op_name] = row
    except HloReadError:
        raise
    except _HOSTILE as e:  # xla's formulas on values no compiler writes: a dimension index out of range...
        raise HloReadError(f"{type(e).__name__}: {e}") from e
    out.rows = list(rows.values())
    return out


#: A convert opcode's bytes: a module or fused computation without them converts nothing, and is not parsed for it.
_CONVERT_BYTES = _opcode_bytes(frozenset({xla.HLO_CONVERT}))


def convert_ops(prog: _Program) -> dict[str, bool]:
    """Each executed instruction that converts dtypes -> whether converting is all it does.

    Why: XLA names a fusion after its root instruction, so element-wise math done in f32 on bf16 data ends in a
    convert and is called ``loop_convert_fusion`` -- a kernel name that reads as a cast while it computes a sine or
    an add.  The fused computation's opcodes say what it does: a cast holds converts and instructions that only
    move or re-lay out values (``xla.HLO_CAST_ONLY_OPCODES``); anything else is work.  :class:`HloReadError` for a
    corrupt program."""
    out: dict[str, bool] = {}
    seen: dict[int, bool | None] = {}
    try:
        for comp, _, _ in _executed(prog, ModuleWork(module="")):
            for inst in comp.instructions:
                if inst.opcode == xla.HLO_CONVERT:
                    out[inst.name] = True
                elif inst.opcode == xla.HLO_FUSION:
                    raws = [prog.raw.get(c, b"") for c in inst.called_computation_ids]
                    if any(_CONVERT_BYTES.search(r) for r in raws):
                        out[inst.name] = all(_only_converts(prog, c, seen, 1) for c in inst.called_computation_ids)
    except HloReadError:
        raise
    except _HOSTILE as e:
        raise HloReadError(f"{type(e).__name__}: {e}") from e
    return out


def _enter(seen: dict[int, Any], cid: int, depth: int) -> tuple[bool, Any]:
    """(True, the answer) where fused computation ``cid`` was answered before; else (False, None), ``cid`` marked in
    progress (None) in ``seen``.  A walk back into a computation in progress is a cycle, and a nesting deeper than
    ``_MAX_DEPTH`` a cyclic program: both are corrupt (:class:`HloReadError`)."""
    if cid in seen:
        got = seen[cid]
        if got is None:
            raise HloReadError(f"computation id {cid} calls itself")
        return True, got
    if depth > _MAX_DEPTH:
        raise HloReadError("fusions nested too deep")
    seen[cid] = None
    return False, None


def _only_converts(prog: _Program, cid: int, seen: dict[int, bool | None], depth: int) -> bool:
    """Whether fused computation ``cid`` (and the fusions nested in it) holds cast-only opcodes alone; ``seen``
    caches each computation's answer (None while in progress: a cycle is a corrupt program)."""
    hit, got = _enter(seen, cid, depth)
    if hit:
        return got
    ok = True
    for inst in prog.comp(cid).instructions:
        if inst.opcode in _NESTING_OPCODES:
            ok = all(_only_converts(prog, c, seen, depth + 1) for c in inst.called_computation_ids)
        else:
            ok = inst.opcode in xla.HLO_CAST_ONLY_OPCODES
        if not ok:
            break
    seen[cid] = ok
    return ok


def fusion_classes(prog: _Program) -> dict[str, str]:
    """Each executed fusion -> the kernel class its fused computations' opcodes state (``xla.fusion_class``).

    Why: XLA names a fusion's kernel after its root (``loop_convert_fusion``) or only numbers it (``fusion_338``, a
    Triton softmax); the opcodes it fuses say what its kernel does.  :class:`HloReadError` for a corrupt program."""
    out: dict[str, str] = {}
    seen: dict[int, tuple[frozenset[str], frozenset[str]] | None] = {}
    try:
        for comp, _, _ in _executed(prog, ModuleWork(module="")):
            for inst in comp.instructions:
                if inst.opcode != xla.HLO_FUSION:
                    continue
                got = [_fused_opcodes(prog, c, seen, 1) for c in inst.called_computation_ids]
                kind = xla.fusion_class(frozenset().union(*(o for o, _ in got)), frozenset().union(*(t for _, t in got)))
                if kind is not None:
                    out[inst.name] = kind
    except HloReadError:
        raise
    except _HOSTILE as e:
        raise HloReadError(f"{type(e).__name__}: {e}") from e
    return out


def _fused_opcodes(prog: _Program, cid: int, seen: dict, depth: int) -> tuple[frozenset[str], frozenset[str]]:
    """(opcodes, custom-call targets) of fused computation ``cid`` and the fusions and calls nested in it; ``seen``
    caches each computation's answer (None while in progress: a cycle is a corrupt program)."""
    hit, got = _enter(seen, cid, depth)
    if hit:
        return got
    ops: set[str] = set()
    targets: set[str] = set()
    for inst in prog.comp(cid).instructions:
        if inst.opcode in _NESTING_OPCODES:
            for c in inst.called_computation_ids:
                o, t = _fused_opcodes(prog, c, seen, depth + 1)
                ops |= o
                targets |= t
            continue
        ops.add(inst.opcode)
        if inst.opcode == "custom-call":
            targets.add(inst.custom_call_target)
    seen[cid] = got = (frozenset(ops), frozenset(targets))
    return got


#: JAX's names for the instructions of a gradient: the forward pass linearised (``jvp(``) and its transpose.
_JVP = b"jvp("
_TRANSPOSE = "transpose(jvp("


def steps_per_call(raw: bytes) -> int | None:
    """Training steps one execution of the module runs: the trip count of a ``while`` of the entry computation whose
    body holds a whole training step -- forward instructions (``jvp(...)``) and their transpose (``transpose(jvp(...))``)
    -- a ``lax.scan``/``fori_loop`` over steps inside one jitted call.  A loop over layers holds one of the two only
    (the forward scan, or the backward one).  None where no such loop has a trip count XLA proved."""
    if _JVP not in raw:
        return None
    try:
        prog = _Program(parse_module(raw, skim=True))
        best = None
        for inst in prog.entry().instructions:
            if inst.opcode != "while":
                continue
            trip = xla.known_trip_count(xla.backend_config(inst.backend_config))
            if not trip or trip < 2:
                continue
            names = [i.metadata.op_name for c in prog.called(inst) for i in c.instructions]
            fwd = any("jvp(" in n and _TRANSPOSE not in n for n in names)
            if fwd and any(_TRANSPOSE in n for n in names):
                best = max(best or 0, trip)
        return best
    except (HloReadError, *_HOSTILE):
        return None


def _executed(prog: _Program, out: ModuleWork) -> Iterator[tuple[Any, int, bool]]:
    """(computation, runs per module execution, whether it is inside a ``conditional``'s branch) of every computation
    the program executes outside fusions: the entry, ``while`` bodies and conditions (times the known trip count;
    once, counted in ``out.unknown_loops``, where XLA proved none), and what calls, conditionals and async starts
    call.  A conditional runs one of its branches an execution: each branch is walked as if it ran (its runs an upper
    bound), marked so the kernels that ran can say which did (``metrics.flops``)."""
    stack = [(prog.entry(), 1, 0, False)]
    while stack:
        comp, reps, depth, branch = stack.pop()
        if depth > _MAX_DEPTH:
            raise HloReadError("computations nested too deep (a cycle?)")
        prog.visit()
        yield comp, reps, branch
        for inst in comp.instructions:
            op = inst.opcode
            if op == xla.HLO_WHILE:
                trip = xla.known_trip_count(xla.backend_config(inst.backend_config))
                called = prog.called(inst)
                if trip is None and _has_work(prog, called):
                    out.unknown_loops += 1
                stack.extend((c, reps * (1 if trip is None else trip), depth + 1, branch) for c in called)
            elif op in xla.HLO_CALLERS:
                inner = branch or op == xla.HLO_CONDITIONAL
                stack.extend((c, reps, depth + 1, inner) for c in prog.called(inst))


def _has_work(prog: _Program, comps: list[Any]) -> bool:
    """Any dot/conv/library call directly in ``comps`` or in their fusions (for the unknown-loop note)."""
    for comp in comps:
        for inst in comp.instructions:
            if prog.work(comp, inst) is not None:
                return True
            if inst.opcode == xla.HLO_FUSION and prog.fused_work_of(inst):
                return True
    return False


def _collective(prog: _Program, comp: Any, inst: Any) -> tuple[int, int]:
    """(bytes of one rank's message, group size or -1) of a collective: its operands' bytes (the first alone for a
    collective-permute); the size of its replica groups (``collective_device_list``, else the deprecated
    ``replica_groups``), or for a collective-permute the devices its source-target pairs name; -1 where the
    groups are empty (all devices: the module does not say how many)."""
    ops = prog.operands(comp, inst)
    msg = sum(shape_bytes(o.shape) for o in ops[: xla.collective_operands(inst.opcode, len(ops))])
    return msg, _group_size(inst)


def _group_size(inst: Any) -> int:
    dl = inst.collective_device_list
    if dl.HasField("iota_replica_group_list") and dl.iota_replica_group_list.num_devices_per_group > 0:
        return int(dl.iota_replica_group_list.num_devices_per_group)
    groups = dl.replica_groups or inst.replica_groups
    if groups and groups[0].replica_ids:
        return len(groups[0].replica_ids)
    pairs = inst.source_target_pairs
    if pairs:
        return len({p.source for p in pairs} | {p.target for p in pairs})
    return -1


def _row(prog: _Program, comp: Any, inst: Any) -> FlopRow | None:
    """The FLOP row of one instruction of an executed computation, None where it does no matmul/conv work."""
    if inst.opcode == xla.HLO_FUSION:
        works = prog.fused_work_of(inst)
        if not works:
            return None
    else:
        w = prog.work(comp, inst)
        if w is None:
            return None
        works = [w]
    main = max(works, key=lambda w: w.flops)
    flops = sum(w.flops for w in works)
    result = (sum(a.nbytes for a in _custom_call_result(inst.shape)) if inst.opcode == "custom-call"
              else shape_bytes(inst.shape))
    moved = sum(shape_bytes(o.shape) for o in prog.operands(comp, inst)) + result
    what = main.what if len(works) == 1 else f"{main.what} and {len(works) - 1} more"
    label = f"{inst.name}: {what}" if inst.opcode == xla.HLO_FUSION else what
    return FlopRow(op_name=inst.name, flops=flops, bytes=float(moved), precision=xla.precision_code(main.dtype),
                   kind=main.kind, label=label)
