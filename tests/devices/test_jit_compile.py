"""Run-time kernel compilation by the vendor's own compiler call (NVRTC, hipRTC, their linkers), under whatever
range a JIT compiler wraps it in: a one-time cost the job stage books as start-up (``job/phase.py``)."""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices


@pytest.mark.parametrize("name", ["nvrtcCompileProgram", "executor_utils::Nvrtc::CompileProgram", "nvJitLinkComplete",
                                  "cuLinkComplete", "hiprtcCompileProgram", "hiprtcLinkComplete"])
def test_a_runtime_compiler_call_is_jit_compilation(name):
    assert devices.is_jit_compile(name)


@pytest.mark.parametrize("name", ["cudaLaunchKernel", "cuModuleLoadData", "executor_utils::bindInputs",
                                  "nvrtcGetPTX", "KernelExecutor::runFusion", "compile_fx_inner"])
def test_other_calls_and_ranges_are_not(name):
    # getting the compiled PTX, loading a module (INIT_CALLS) and a framework's own compile spans (its
    # compile_event) are not the compiler's call
    assert not devices.is_jit_compile(name)
