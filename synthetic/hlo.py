"""Write XLA HLO modules, and XSpaces that carry them, with the reader's own runtime schema (``formats/xplane/hlo.py``).

Why by hand: a test of the FLOP formulas needs a module whose FLOPs are known without XLA (computed on paper), a
hostile-input test needs bytes no compiler writes, and the generated JAX captures (:mod:`synthetic.jaxcapture`)
carry their step's HLO in ``/host:metadata`` as real JAX captures do (``Hlo Proto``), so their FLOPs, MFU and
collective messages are known by construction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tb_gpu_advisor.formats.xplane.hlo import message_class
from tb_gpu_advisor.formats.xplane.schema import message_class as xspace_class

#: xla PrimitiveType numbers of the element types the tests use.
PRIMITIVE = {"pred": 1, "s8": 2, "s32": 4, "f16": 10, "f32": 11, "bf16": 16, "tuple": 13}


def shape(dtype: str, *dims: int):
    """An array ShapeProto."""
    return message_class("ShapeProto")(element_type=PRIMITIVE[dtype], dimensions=list(dims))


def tuple_shape(*shapes):
    return message_class("ShapeProto")(element_type=PRIMITIVE["tuple"], tuple_shapes=list(shapes))


@dataclass
class Computation:
    """One computation under construction: instructions get module-unique ids."""

    module: Module
    name: str
    id: int
    insts: list = field(default_factory=list)

    def add(self, name: str, opcode: str, shp, operands=(), **fields) -> int:
        """Append an instruction; ``operands`` are ids returned by earlier calls.  ``backend_config`` may be a dict
        (written as XLA writes it: JSON)."""
        cfg = fields.pop("backend_config", None)
        if isinstance(cfg, dict):
            fields["backend_config"] = json.dumps(cfg).encode()
        elif cfg is not None:
            fields["backend_config"] = cfg
        self.module.next_id += 1
        inst = message_class("HloInstructionProto")(name=name, opcode=opcode, shape=shp, id=self.module.next_id,
                                                      operand_ids=list(operands), **fields)
        self.insts.append(inst)
        return inst.id

    def param(self, name: str, shp) -> int:
        return self.add(name, "parameter", shp)


@dataclass
class Module:
    """An HloModuleProto under construction; ``encode`` writes the HloProto bytes of the ``Hlo Proto`` stat."""

    name: str
    comps: list[Computation] = field(default_factory=list)
    next_id: int = 0

    def computation(self, name: str) -> Computation:
        c = Computation(self, name, 100 + len(self.comps))
        self.comps.append(c)
        return c

    def encode(self, entry: Computation | None = None) -> bytes:
        entry = entry or self.comps[-1]
        mod = message_class("HloModuleProto")(name=self.name, entry_computation_name=entry.name,
                                              entry_computation_id=entry.id)
        for c in self.comps:
            mod.computations.add(name=c.name, id=c.id, instructions=c.insts)
        return message_class("HloProto")(hlo_module=mod).SerializeToString()


def dot_dims(lc=(), rc=(), lb=(), rb=()):
    return message_class("DotDimensionNumbers")(lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc),
                                                lhs_batch_dimensions=list(lb), rhs_batch_dimensions=list(rb))


def json_dims(lc=(), rc=(), lb=(), rb=()) -> dict:
    """DotDimensionNumbers as XLA's JSON backend configs write them (int64 as strings)."""
    return {"lhs_contracting_dimensions": _strs(lc), "rhs_contracting_dimensions": _strs(rc),
            "lhs_batch_dimensions": _strs(lb), "rhs_batch_dimensions": _strs(rb)}


def _strs(v) -> list[str]:
    return [str(x) for x in v]


def metadata_space(modules: dict[str, bytes]) -> bytes:
    """An XSpace whose ``/host:metadata`` plane holds one event metadata per module (``jit_f(12)``) with its
    ``Hlo Proto`` bytes stat, as JAX writes them."""
    space = xspace_class("XSpace")()
    plane = space.planes.add(id=1, name="/host:metadata")
    plane.stat_metadata.add(key=1).value.CopyFrom(xspace_class("XStatMetadata")(id=1, name="Hlo Proto"))
    plane.stat_metadata.add(key=2).value.CopyFrom(xspace_class("XStatMetadata")(id=2, name="jax_version"))
    plane.stats.add(metadata_id=2, str_value="0.0-test")
    for i, (event_name, raw) in enumerate(modules.items(), start=1):
        entry = plane.event_metadata.add(key=i)
        entry.value.id = i
        entry.value.name = event_name
        entry.value.stats.add(metadata_id=1, bytes_value=raw)
    return space.SerializeToString()


def mlp_train_step(name: str, layers: int, rows: int, width: int, dtype: str = "bf16",
                   allreduce_group: int | None = None, gemm_names: list[str] | None = None
                   ) -> tuple[bytes, list[str], str | None]:
    """The HLO of one MLP training step: ``layers`` square dots forward, their weight and input gradients backward
    (the first layer's input needs none: ``3 x layers - 1`` dots of ``2 x rows x width x width`` FLOPs each), and
    with ``allreduce_group`` one ``all-reduce-start`` of every weight gradient over that many replicas.
    ``gemm_names``: the dots' instruction names, in order (the names a capture's GEMM kernels carry as ``hlo_op``).

    Returns (HloProto bytes, the dots' instruction names, the all-reduce's name or None): kernels name their op
    by these names (``hlo_op``)."""
    mod = Module(name)
    e = mod.computation("main")
    x = e.param("x", shape(dtype, rows, width))
    ws = [e.param(f"w{i}", shape(dtype, width, width)) for i in range(layers)]
    dots: list[str] = []

    def dot(a: int, b: int, lc: int, rc: int) -> int:
        dots.append(gemm_names[len(dots)] if gemm_names else f"dot.{len(dots) + 1}")
        return e.add(dots[-1], "dot", shape(dtype, rows if lc == 1 else width, width), (a, b),
                     dot_dimension_numbers=dot_dims(lc=[lc], rc=[rc]))

    acts = [x]
    for w in ws:
        acts.append(dot(acts[-1], w, 1, 0))
    grad = acts[-1]
    grads = []
    for i in reversed(range(layers)):
        grads.append(dot(acts[i], grad, 0, 0))  # dW = a_i^T g: contracting the rows
        if i:
            grad = dot(grad, ws[i], 1, 1)  # dX = g W^T
    ar = None
    if allreduce_group:
        ar = "all-reduce-start.1"
        rg = message_class("ReplicaGroup")(replica_ids=list(range(allreduce_group)))
        dl = message_class("CollectiveDeviceListProto")(replica_groups=[rg])
        e.add(ar, "all-reduce-start", tuple_shape(*[shape(dtype, width, width) for _ in grads]), tuple(grads),
              collective_device_list=dl)
    return mod.encode(e), dots, ar


def fusions_module(name: str, fusions: dict[str, tuple[str, ...]], dtype: str = "bf16", n: int = 1 << 20) -> bytes:
    """A module whose entry runs one fusion per item of ``fusions``: instruction name -> the opcodes of its fused
    computation after its parameter, each applied to the one before (``("convert", "sine", "convert")``: bf16 math in
    f32, as XLA fuses it and names it ``loop_convert_fusion``; ``("convert",)``: a cast alone).  The opcodes, not
    the shapes, are what a test of the cast reading needs: every array is ``dtype[n]``."""
    mod = Module(name)
    fused = []
    for i, ops in enumerate(fusions.values()):
        c = mod.computation(f"fused_computation.{i}")
        prev = c.param(f"param_0.{i}", shape(dtype, n))
        for k, op in enumerate(ops):
            prev = c.add(f"{op}.{i}.{k}", op, shape(dtype, n), (prev,))
        fused.append(c.id)
    e = mod.computation("main")
    x = e.param("x.1", shape(dtype, n))
    for (inst, _), cid in zip(fusions.items(), fused):
        e.add(inst, "fusion", shape(dtype, n), (x,), called_computation_ids=[cid])
    return mod.encode(e)
