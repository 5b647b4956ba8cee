"""A logdir whose only profiles TensorFlow's legacy profiler wrote is told so, not "no GPU profiles found" (survey
h37-survey11: easyhardhoon/FBF-TF-hoon's 2023 Keras logdir holds two ``plugins/profile/<session>/local.trace``
files from ``tf.summary.trace_on(profiler=True)`` / ``trace_export(profiler_outdir=...)`` beside its Keras
callback's ``.xplane.pb`` sessions).  Truth by construction: the legacy file is named and placed as TensorFlow
writes it; a real XPlane (``tests/fixtures/real``) is still listed beside it; a ``local.trace`` anywhere else is
nobody's."""

from __future__ import annotations

import shutil
from pathlib import Path

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tests.support.paths import FIXTURES

LEGACY = "plugins/profile/2023-09-19_17-42-13/local.trace"
XPLANE = FIXTURES / "real" / "tf221_cpu_custom_loop.xplane.pb"


def _legacy(root: Path) -> Path:
    path = root / LEGACY
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n.\x08\xf5\x03\x12)\n\t/host:CPU")  # the start of a real one: a Trace proto, no XPlane
    return path


def test_a_legacy_trace_is_named_with_what_to_capture_instead(tmp_path):
    _legacy(tmp_path)
    skips = dict(skipped(str(tmp_path)))
    assert set(skips) == {LEGACY}
    assert "legacy profiler" in skips[LEGACY] and "tf.profiler.experimental.start" in skips[LEGACY]
    assert discover(str(tmp_path)) == []


def test_the_cli_error_says_what_the_logdir_holds(tmp_path, capsys):
    _legacy(tmp_path)
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "No GPU profiles read" in err and "legacy profiler" in err
    assert "no GPU profiles found" not in err


def test_an_xplane_beside_it_is_still_listed(tmp_path):
    _legacy(tmp_path)
    session = tmp_path / "train" / "plugins" / "profile" / "2023_09_19_17_33_14"
    session.mkdir(parents=True)
    shutil.copy(XPLANE, session / "host.xplane.pb")
    assert [(s.run, s.session) for s in discover(str(tmp_path))] == [("train", "2023_09_19_17_33_14")]
    assert set(dict(skipped(str(tmp_path)))) == {LEGACY}


def test_a_local_trace_elsewhere_is_not_taken_for_one(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "local.trace").write_bytes(b"x")
    assert LEGACY not in dict(skipped(str(tmp_path)))
    assert not any("legacy profiler" in why for _, why in skipped(str(tmp_path)))


def test_the_note_says_which_tensorflow_wrote_it_and_which_writes_an_xplane(tmp_path):
    """h37-wild55x: TF 2.0-2.1's Keras callback (``profile_batch``) wrote ``local.trace`` through this profiler (the
    DVC-CC READMEs of TF-GPU 2.0.0 runs on a V100 list ``plugins/profile/2019-10-07_10-20-31/local.trace``); telling
    those users to use the callback's ``profile_batch`` without a version sent them back to the same file."""
    _legacy(tmp_path)
    why = dict(skipped(str(tmp_path)))[LEGACY]
    assert "TensorFlow 1.14 to 2.1" in why and "Keras TensorBoard callback's profile_batch)" in why
    assert "TensorFlow 2.3 or later" in why
