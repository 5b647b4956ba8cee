"""Apple GPUs (PyTorch's ``mps`` device, Apple Silicon's M-series): what a PyTorch profile of them holds, and words.

torch.profiler on the MPS backend records the host's ops only: Kineto has no Metal activity source, so a capture of
a job that ran on the Apple GPU holds ``aten::`` ops and no kernel, copy or runtime call -- by design, not a lost
buffer (CUPTI's case).  The GPU's side is recorded by the backend's own OS Signposts (``torch.mps.profiler.profile``,
PyTorch 2.1 on: one interval per op's Metal encoding, ``wait_until_completed`` for one dispatch each) read in Xcode
Instruments (the Logging and Metal System Trace instruments; pytorch/pytorch ``aten/src/ATen/mps/MPSProfiler.h``),
and since PyTorch 2.8 a Metal capture (``torch.mps.profiler.metal_capture``, a ``.gputrace`` for Xcode).

The evidence a Kineto capture gives is the host's: the ops PyTorch dispatches only for MPS tensors
(``Framework.backend_event``: ``aten::_mps_convolution``, ``aten::_lstm_mps``) and the allocator's ``[memory]`` events
of ``Device Type`` 13 (c10's ``DeviceType::MPS``).
"""

from __future__ import annotations

from tb_gpu_advisor.model.schema import Action

VENDOR = "Apple"
#: PyTorch's device string of the backend, as ``Framework.backend_event`` and the Kineto reader name it.
BACKEND = "mps"
#: The GPU in words.
GPU = "the Apple GPU"
#: Why a capture of it holds no GPU record.
#: why a host's scalar reads are all a capture on the MPS backend shows of its GPU: said where other captures say their
#: GPU's records were lost (``rules.host_sync``)
NOT_RECORDED = "torch.profiler does not record the Apple GPU's work (PyTorch's MPS backend)"
UNTRACED = ("torch.profiler records only the host's ops on the MPS backend (it has no Metal activity source), so the "
            "GPU's work is not in this capture by design: no record of it was dropped")


def trace_gpu_action() -> Action:
    """How to record the Apple GPU's own work: the backend's OS Signposts in Instruments, not CUDA tracing."""
    return Action(
        text=("Record the GPU's side with the MPS backend's own profiler: wrap the steps in "
              "torch.mps.profiler.profile(mode=\"interval\", wait_until_completed=True) (PyTorch 2.1 or newer) and "
              "record the run in Xcode Instruments (the Logging and Metal System Trace instruments show each op's "
              "GPU interval); torch.mps.synchronize() before reading a time keeps host timings honest. "
              "torch.profiler's trace shows the host's ops only on this backend."),
        snippet=("with torch.mps.profiler.profile(mode=\"interval\", wait_until_completed=True):\n"
                 "    for _ in range(5):\n        train_step()\n"
                 "torch.mps.synchronize()"),
        snippet_lang="python")


#: CUDA's device in PyTorch code -> the MPS backend's (``torch.mps.synchronize``, ``device='mps'``).
_CODE = (("'cuda'", "'mps'"), ('"cuda"', '"mps"'), ("torch.cuda.", "torch.mps."), (".cuda()", ".to('mps')"))


def code(snippet: str) -> str:
    """A PyTorch snippet written for the CUDA device, for the ``mps`` device."""
    for a, b in _CODE:
        snippet = snippet.replace(a, b)
    return snippet


def on_mps(actions: list[Action]) -> list[Action]:
    """``actions`` (a framework's fixes, in CUDA's spelling) with their snippets for the ``mps`` device; a fix that
    names a CUDA-only tool (the CUDA sync debug mode) has no MPS counterpart and is left out."""
    return [Action(text=a.text.replace("torch.cuda.", "torch.mps."), snippet=code(a.snippet) if a.snippet else a.snippet,
                   snippet_lang=a.snippet_lang) for a in actions if "CUDA" not in a.text]
