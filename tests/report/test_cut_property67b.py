"""Every format's file cut at any byte is never healthy: it carries a damage record or a clear error naming the file,
and the CLI's exit status follows its one rule (2: a host not analysed, or analysed from a damaged file) -- a property
over small real fixtures of this repository, each cut at a few seeded offsets (h37-damage67b; issue #37: "bad input
gets a clear error, and a damaged file is never healthy").

Why a property: the damage tests before (``test_damage_records67``) cut each file at one chosen byte, mostly half-way,
where each reader had been taught its cut; a Kineto trace cut in its head read "no traceEvents array: not a PyTorch
profiler trace" -- a foreign file, no record -- and an nvprof CSV or a rocprofv3 JSON cut short was an error with no
record.  Here each reader meets cuts it was not tuned to: the offsets are drawn (seed 67) over the whole file, plus one
inside its first kilobyte (a head) and one in its first 64 bytes.

Truth by construction: a file cut short of its own end is damaged, whatever byte it was cut at; where the cut leaves
nothing that says what the file is (a few bytes of a JSON object's start), a clear error naming the file is the honest
answer.  The real fixtures: a Kineto trace of an RTX A4000 (decompressed, and its gzip cut), a JAX H200 XPlane, an
A100 Nsight export, a V100 nvprof database, a rocprof ``results.json``, a rocmProfileData database, a memory snapshot's pickle, a rocprofv3
CSV kernel trace (an RDNA2 iGPU); nvprof's printed CSV and a rocprofv3 JSON are generated (``synthetic``: no real one
is kept).

Fail on base 225b624d (h37-damage68): ``rocprofv3_csv_alone`` (a lone kernel trace cut in its header: left out, "no GPU
profiles found in <logdir>", the file unnamed), and every case of the trimmed-schema test below (no record: an
Nsight export without ``StringIds`` read on, its calls and kernels nameless, exit 0; a rocmProfileData or rocpd
database lacking a column an error with no record).

Fail on base 776bb150: ``kineto_gz`` (cut in its first deflate bytes: zlib's bare EOFError, no file named), ``rocprof`` (its ``results.json`` cut in ``otherData``, after its events, read as a whole file:
exit 0) and ``rocprofv3_csv`` (its kernel trace cut in its header: left out, the capture read without it, exit 0)."""

from __future__ import annotations

import gzip
import random
import shutil
from pathlib import Path

import pytest

from synthetic import nvprofcsv, rocprofv3trace
from tb_gpu_advisor.cli.report import exit_code
from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.run_report import cli_report, fresh_report

KINETO = FIXTURES / "wild" / "cuda_only_a4000_swin_fwd" / "a4000_1312450.1670476781.pt.trace.json.gz"
XPLANE = FIXTURES / "h200_jobs" / "jax_jit_inference" / "plugins" / "profile" / "2026_11_27_14_54_27" / "vm.xplane.pb"
NSYS = FIXTURES / "wild" / "extrap_ex_gpu_a100" / "ex-gpu.s100000.sqlite"
ROCPROF = FIXTURES / "wild" / "rocprof_mxfp4_setup_gfx950" / "results.json.gz"
RPD = FIXTURES / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"
SNAPSHOT = FIXTURES / "snapshots_wild" / "state_before_training_othello.pickle.gz"
ROCPROFV3_CSV = FIXTURES / "wild" / "hip_matmul_rdna2_igpu"
NVPROF = FIXTURES / "wild" / "pyprof_lm_v100_nvprof" / "net.sql"
#: Cuts per file drawn over the whole file (and one in its first kilobyte, one in its first 64 bytes).
CUTS, SEED = 3, 67


def _nvprof_csv(tmp: Path) -> bytes:
    nvprofcsv.write(tmp / "made.csv", steps=3)
    return (tmp / "made.csv").read_bytes()


def _rocprofv3_json(tmp: Path) -> bytes:
    rocprofv3trace.write(str(tmp / "made"), [[("gemm_kernel(float*)", 400.0), ("relu(float*)", 50.0)]] * 3,
                         fmt="json")
    return (tmp / "made" / f"{rocprofv3trace.PID}_results.json").read_bytes()


#: name -> (the file's name in its run folder, its whole bytes given a scratch folder, the folder of its siblings)
FILES = {
    "kineto": ("a4000.1670476781.pt.trace.json", lambda t: gzip.decompress(KINETO.read_bytes()), None),
    "kineto_gz": ("a4000.1670476781.pt.trace.json.gz", lambda t: KINETO.read_bytes(), None),
    "xplane": ("plugins/profile/2026_01_01_00_00_00/vm.xplane.pb", lambda t: XPLANE.read_bytes(), None),
    "nsys": ("ex-gpu.sqlite", lambda t: NSYS.read_bytes(), None),
    "rocprof": ("results.json", lambda t: gzip.decompress(ROCPROF.read_bytes()), None),
    "rpd": ("matmul_result.rpd", lambda t: RPD.read_bytes(), None),
    "snapshot": ("snapshot.pickle", lambda t: gzip.decompress(SNAPSHOT.read_bytes()), None),
    "rocprofv3_csv": ("output_kernel_trace.csv", lambda t: (ROCPROFV3_CSV / "output_kernel_trace.csv").read_bytes(),
                      ROCPROFV3_CSV),
    # the same kernel trace with no sibling CSV: cut in its header, nothing else says the run is rocprofv3's
    "rocprofv3_csv_alone": ("output_kernel_trace.csv",
                            lambda t: (ROCPROFV3_CSV / "output_kernel_trace.csv").read_bytes(), None),
    "nvprof_csv": ("trace.csv", _nvprof_csv, None),
    "nvprof": ("net.nvvp", lambda t: NVPROF.read_bytes(), None),
    "rocprofv3_json": ("4242_results.json", _rocprofv3_json, None),
}


def _offsets(name: str, n: int) -> list[int]:
    """The seeded cuts of an ``n``-byte file: ``CUTS`` over the whole of it, one in its first kilobyte (its head) and
    one in its first 64 bytes (a format's magic, a gzip header and its first deflate bytes)."""
    rng = random.Random(f"{SEED}:{name}")
    return sorted({*rng.sample(range(1, n), CUTS), rng.randrange(16, min(1024, n)), rng.randrange(8, min(64, n))})


def _logdir(tmp: Path, name: str, data: bytes, siblings: Path | None) -> Path:
    run = tmp / "logdir" / "run"
    if siblings is not None:  # the capture's other files, whole: only the one named is cut
        shutil.copytree(siblings, run)
    target = run / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return tmp / "logdir"


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_a_file_cut_at_any_byte_is_never_healthy_and_says_so(tmp_path, fmt):
    name, whole, siblings = FILES[fmt]
    data = whole(tmp_path)
    for k in _offsets(fmt, len(data)):
        logdir = _logdir(tmp_path / f"cut{k}", name, data[:k], siblings)
        if not discover(str(logdir)):  # left out by its discovery (a cut SQLite head): the CLI says so, by name
            code, _, err = cli_report(logdir)
            assert code == 2 and Path(name).name in err, (fmt, k, code, err)
            continue
        report = fresh_report(logdir)
        assert not report.healthy and not report.verdict.startswith(("Healthy", "No ")), (fmt, k, report.verdict)
        assert exit_code([report], None) == 2, (fmt, k, report.verdict)
        hosts = [h for h in report.hosts if h.error or h.records()]
        assert hosts, (fmt, k, report.verdict)
        for h in hosts:
            # a record says what the damage is; without one, the error names the file it could not read
            assert h.records() or Path(name).name in h.error, (fmt, k, h.error)


def _without(src: Path, tmp: Path, *statements: str) -> bytes:
    """The SQLite file ``src`` with ``statements`` run on a copy (then vacuumed: a whole, well-formed file)."""
    import sqlite3

    shutil.copyfile(src, tmp / "edit.sqlite")
    con = sqlite3.connect(tmp / "edit.sqlite")
    for s in statements:
        con.execute(s)
    con.commit()
    con.execute("VACUUM")
    con.close()
    return (tmp / "edit.sqlite").read_bytes()


#: A real Nsight export of Nsight's own tables (``ANALYSIS_DETAILS``: an export by them, whatever else it lacks).
NSYS_OWN = FIXTURES / "wild" / "extrap_parallel_kernels_gtx1060" / "profile16.sqlite"
#: rpd_tracer's views name the columns: dropped first, or SQLite refuses to drop one.
_RPD_VIEWS = tuple(f"DROP VIEW {v}" for v in ("api", "op", "busy", "ktop", "top", "kernel", "copy", "copyop"))
#: name -> (the file's name in its run folder, its bytes given a scratch folder): a whole, well-formed SQLite file
#: whose schema lacks what its profiler always writes.
TRIMMED = {
    # every call's and kernel's name is an id into StringIds; without it nothing can be named
    "nsys_no_string_table": ("profile16.sqlite", lambda t: _without(NSYS_OWN, t, "DROP TABLE StringIds")),
    "rpd_op_without_queue": ("matmul_result.rpd",
                             lambda t: _without(RPD, t, *_RPD_VIEWS, "ALTER TABLE rocpd_op DROP COLUMN queueId")),
    "rpd_strings_without_text": ("matmul_result.rpd", lambda t: _without(
        RPD, t, *_RPD_VIEWS, "ALTER TABLE rocpd_string RENAME COLUMN string TO text_")),
}


@pytest.mark.parametrize("case", sorted(TRIMMED))
def test_a_whole_file_of_a_trimmed_schema_is_unreadable_never_healthy(tmp_path, case):
    """A well-formed SQLite file lacking a table or column its profiler always writes: an error naming the file,
    carrying an 'unreadable' record (SQLite read it whole: nothing lies past the damage, so it is no cut), exit 2."""
    name, make = TRIMMED[case]
    logdir = _logdir(tmp_path, name, make(tmp_path), None)
    report = fresh_report(logdir)
    assert not report.healthy and exit_code([report], None) == 2, (case, report.verdict)
    (host,) = report.hosts
    assert host.error and name in host.error, (case, host.error)
    assert [d.kind for d in host.records()] == ["unreadable"], (case, host.records())
