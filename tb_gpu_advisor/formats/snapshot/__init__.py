"""PyTorch memory snapshots (``torch.cuda.memory._dump_snapshot``'s ``*.pickle``): their layout (recognised by content),
a restricted unpickler that builds plain data only (``unpickle.py``), and the reader to the neutral trace model
(``reader.read_trace``): the allocator's history per GPU, its state at the dump, and its out-of-memory errors."""

from tb_gpu_advisor.formats.base import Format
from tb_gpu_advisor.formats.snapshot.layout import LAYOUT


def _no_kernels(_path: str) -> bool:
    """A snapshot holds memory, no GPU activity: the tab opens on a trace's session before it."""
    return False


FORMAT = Format(id="snapshot", name="PyTorch memory snapshot", layout=LAYOUT, probe=_no_kernels,
                reader_module="tb_gpu_advisor.formats.snapshot.reader")
