"""The tables of nvprof's database (``nvprof -o <file>.nvvp`` / ``--export-profile``: CUDA's legacy profiler, for GPUs
up to Volta), as its files hold them (``Version`` 12-14; checked against a TITAN V MXNet inference of 2019 and a
Tesla V100 PyTorch language model of 2020, both CUDA 10.x):

* CUPTI's activity records, one table per kind, named by CUPTI's own enum (``CUPTI_ACTIVITY_KIND_<kind>``) -- the
  names an Nsight Systems export also uses for some tables, with another schema: every table is written, empty or not;
* ``StringTable (_id_, value)``: every name (kernels, the device, NVTX texts) by id; ``0`` is ``-- null --``;
* ``CONCURRENT_KERNEL`` (``KERNEL`` where the kernels were serialized): ``start`` / ``end`` (ns, CUPTI's clock),
  ``deviceId``, ``streamId``, ``correlationId``, ``name`` (a ``StringTable`` id, the mangled name), grid and block;
* ``MEMCPY`` / ``MEMSET``: CUPTI's ``copyKind`` (1 HtoD, 2 DtoH, ... :data:`COPY_DIRECTION`), ``srcKind`` /
  ``dstKind`` / ``memoryKind`` in CUPTI's ``CUpti_ActivityMemoryKind`` numbering (:data:`MEMORY_KINDS`: 1 pageable,
  2 pinned, 3 device -- one more than Nsight's ``ENUM_CUDA_MEM_KIND``), ``bytes``;
* ``RUNTIME`` / ``DRIVER``: each API call by its callback id ``cbid`` alone (named by ``cbids.py``), with
  ``processId``, ``threadId`` (a 32-bit signed value: the low half of the thread's pthread id) and ``correlationId``;
* ``MARKER``: NVTX, one row per start (``flags`` :data:`MARKER_START`), end (:data:`MARKER_END`) or instant mark,
  a range's two rows sharing their ``id``; its ``name`` (``StringTable``) and ``domain`` are on the start; the thread in
  ``objectId``, CUPTI's ``CUpti_ActivityObjectKindId`` as 12 bytes (little-endian ``processId``, ``threadId``);
* ``DEVICE``: each GPU (``id``) by name, SM count, compute capability, memory size, core clock (kHz).
"""

from __future__ import annotations

from tb_gpu_advisor.formats.heads import NVPROF_OWN as OWN, NVPROF_STRINGS as STRINGS, is_nvprof

__all__ = ["OWN", "STRINGS", "is_nvprof"]

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
CONCURRENT_KERNEL = "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
DRIVER = "CUPTI_ACTIVITY_KIND_DRIVER"
MARKER = "CUPTI_ACTIVITY_KIND_MARKER"
DEVICE = "CUPTI_ACTIVITY_KIND_DEVICE"
#: The string table's id column.
STRING_ID = "_id_"
#: ``CUpti_ActivityFlag``'s marker flags.
MARKER_INSTANT, MARKER_START, MARKER_END = 1, 2, 4
#: ``CUpti_ActivityObjectKind`` of a marker recorded on a process or on a thread: its ``objectId`` holds the ids.
OBJECT_PROCESS, OBJECT_THREAD = 1, 2
#: ``CUpti_ActivityMemcpyKind`` -> the direction in CUPTI's short form (arrays are device memory), as Nsight's reader
#: and Kineto name a copy.
COPY_DIRECTION = {1: "HtoD", 2: "DtoH", 3: "HtoD", 4: "DtoH", 5: "DtoD", 6: "DtoD", 7: "DtoD", 8: "DtoD", 9: "HtoH",
                  10: "PtoP"}
#: ``CUpti_ActivityMemoryKind`` -> the label a copy's name carries (``Memcpy HtoD (Pageable -> Device)``); 0 unknown.
MEMORY_KINDS = {1: "Pageable", 2: "Pinned", 3: "Device", 4: "Array", 5: "Managed", 6: "Device Static",
                7: "Managed Static"}
