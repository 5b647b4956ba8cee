"""A program that marks its forward pass with NVTX alone, and launches nothing else, runs forward passes
(issue #37 class 2, h37-probe43n; h37-probe42n's Left 2).

Public scripts push ``torch.cuda.nvtx.range_push("forward")`` around ``model(input)`` inside an iteration range
(``synthetic.nsysexport.write_marked_forward_loop``'s docstring cites them).  Without ``--pytorch=autograd-nvtx`` no op
range says a backward ran or did not: main read ten ``forward`` ranges holding every kernel launch of the capture as
"GPU work of an unknown kind".  A backward pass launches about as many kernels as its forward, outside its range; fewer
launches outside every forward range than one forward holds means none ran.  The control: the same loop with an
unmarked backward (as many kernels again after each ``forward``) stays of no known kind.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host


def _job(path: str) -> dict:
    return first_host(path)["job"]


@pytest.mark.parametrize("outer", ["iteration-{k}", "iter_{k}", None])
def test_forward_ranges_holding_every_launch_are_forward_passes(tmp_path, outer) -> None:  # noqa: ANN001 - pytest's
    """Ten ``forward`` ranges (inside an iteration range or alone) hold every kernel launch: forward passes."""
    path = str(tmp_path / "fwd.sqlite")
    truth = nx.write_marked_forward_loop(path, outer=outer)
    job = _job(path)
    assert job["kind"] == "inference", job["kind_evidence"]
    assert f"`forward` ×{truth.steps}" in job["kind_evidence"]


def test_a_few_launches_outside_the_forward_are_no_backward(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """A loss or a read-out's few kernels after each forward (5 against the forward's 20) hold no backward of it."""
    path = str(tmp_path / "fwd.sqlite")
    nx.write_marked_forward_loop(path, forward_ops=20, backward_ops=5)
    job = _job(path)
    assert job["kind"] == "inference", job["kind_evidence"]
    assert "fewer than the forward itself launched" in job["kind_evidence"]


def test_an_unmarked_backward_after_the_forward_is_not_read_as_inference(tmp_path) -> None:  # noqa: ANN001
    """Control: as many launches again after each forward, in no range (a backward the names do not show): the
    forward's range alone says nothing of the job's kind."""
    path = str(tmp_path / "train.sqlite")
    nx.write_marked_forward_loop(path, forward_ops=20, backward_ops=20)
    assert _job(path)["kind"] != "inference"


def test_two_ranks_forward_loops_are_judged_each_by_its_own_launches(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Two processes in one export (two ranks, each its own GPU and ``forward`` ranges, at the same times): each
    rank's forwards hold all of its own launches, so the job is forward passes -- counted together by time, one rank's
    launches filled the other's gaps and the job read "unknown" (h37-probe43n's Left 1)."""
    path = str(tmp_path / "fwd2.sqlite")
    nx.write_marked_forward_loop(path, ranks=2)
    job = _job(path)
    assert job["kind"] == "inference", job["kind_evidence"]


def test_two_ranks_with_an_unmarked_backward_are_not_inference(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the same two ranks with as many launches again after each forward (an unmarked backward)."""
    path = str(tmp_path / "train2.sqlite")
    nx.write_marked_forward_loop(path, forward_ops=20, backward_ops=20, ranks=2)
    assert _job(path)["kind"] != "inference"

@pytest.mark.parametrize("name,forward", [
    ("forward", True), ("Forward", True), ("fwd", True), ("forward_step", True), ("model forward", True),
    ("Forward pass", True), ("fwd_bwd", False), ("forward_backward", False), ("forward-backward", False),
    ("FSDP::pre_forward (block.0)", False), ("warmup forward", False), ("forwarder", False), ("backward", False)])
def test_forward_range_names(name: str, forward: bool) -> None:
    """The forward pass's name alone, never a whole training step's, a warm-up's or a wrapper's hook."""
    assert nvtx.is_forward_range(name) is forward


@pytest.mark.parametrize("outer", ["decode {k}", "decode"])
def test_a_decode_loop_running_matrix_products_is_forward_passes(tmp_path, outer) -> None:  # noqa: ANN001 - pytest's
    """A loop whose iterations are ``decode {k}`` (or a bare ``decode``), each running a model's GEMMs and nothing
    launched between them: a model decoding, forward passes (h37-probe42n's Left 1: main said of no known kind)."""
    path = str(tmp_path / "decode.sqlite")
    nx.write_marked_forward_loop(path, iterations=30, forward_ops=8, outer=outer, forward=None)
    job = _job(path)
    assert job["kind"] == "inference", job["kind_evidence"]
    assert "decode steps" in job["kind_evidence"]


def test_a_codecs_decode_loop_is_no_model(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the same ``decode {k}`` loop running a codec's colour conversion, no matrix product: decoding data, no
    model -- of no known kind as before."""
    path = str(tmp_path / "codec.sqlite")
    nx.write_marked_forward_loop(path, iterations=30, forward_ops=8, outer="decode {k}", forward=None,
                                 kernel=nx.CODEC_KERNEL)
    assert _job(path)["kind"] != "inference"


def test_an_autoencoders_decode_in_training_is_not_inference(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: ``decode`` around a decoder's forward (GEMMs) in a training loop whose backward is unmarked: the
    launches after each ``decode`` leave room for its backward, so the name decides nothing."""
    path = str(tmp_path / "vae.sqlite")
    nx.write_marked_forward_loop(path, outer="iteration {k}", forward="decode", backward_ops=20)
    assert _job(path)["kind"] != "inference"


@pytest.mark.parametrize("name,inference", [
    ("decode_step_3", True), ("decode_token_7", True), ("DECODE_ITER_0", True), ("Decode/step_003", True),
    ("decoding step 4", True), ("decode 3", False), ("decode", False), ("decoder", False), ("decode_image", False)])
def test_a_decode_loops_unit_names_inference(name: str, inference: bool) -> None:
    """A decode loop's unit (step, iteration, token) says a model decoding by the name alone; ``decode`` bare, a
    ``decoder`` or a decoded image does not (the job reads those from what runs in them)."""
    assert nvtx.is_inference_range(name) is inference


@pytest.mark.parametrize("name,decode", [("decode 3", True), ("Decode", True), ("decoding", True),
                                         ("decoder", False), ("encode", False), ("decode_backward", False)])
def test_decode_range_names(name: str, decode: bool) -> None:
    """Decoding by the whole word, never a model's ``decoder`` module, never with a training word."""
    assert nvtx.is_decode_range(name) is decode


def test_a_forward_replayed_as_a_cuda_graph_weighs_its_kernels(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """A ``forward`` range around one ``cudaGraphLaunch`` of 20 kernels, then 3 eager read-out kernels after it
    (``g.replay()`` then ``argmax``; vLLM's graphed decode step then its sampler): the forward ran 20 kernels against
    the 3 after it, so no backward ran -- counted by launches (one against three), main read "unknown" (h37-probe44n)."""
    path = str(tmp_path / "graphed.sqlite")
    truth = nx.write_graphed_forward_loop(path, graph_ops=20, after_ops=3)
    job = _job(path)
    assert job["kind"] == "inference", job["kind_evidence"]
    assert f"`forward` ×{truth.steps}" in job["kind_evidence"]


def test_a_graphed_backward_after_a_graphed_forward_is_not_inference(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: a second graph replay of 40 kernels after each graphed forward (``make_graphed_callables``' backward):
    one launch, but as much work as a backward -- no forward passes."""
    path = str(tmp_path / "graphed_train.sqlite")
    nx.write_graphed_forward_loop(path, graph_ops=20, after_ops=3, backward_graph_ops=40)
    assert _job(path)["kind"] != "inference"
