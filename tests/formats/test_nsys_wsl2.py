"""An Nsight export recorded under WSL2 whose kernels were not traced is the platform's limit, not a damaged file
(issue #37, leftover of survey h37-survey-nsys).

The real case (haroonsyed/NVIDIA_SGEMM_PRACTICE ``report1.sqlite`` @51a630e, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): an SGEMM practice run under WSL2 whose ``TARGET_INFO_SYSTEM_ENV`` says
``SoftwareReleaseVersion`` = ``5.15.90.1-microsoft-standard-WSL2`` and ``NvDriverVersion`` = ``536.40``; 192
launches, 36 ``cudaMemcpy``, no kernel or memcpy table, though the run finished (its stdout: 706 GFLOPS).  Main
called it damaged (exit 2, "the profiler stopped before the GPU's records were flushed").  NVIDIA's profilers trace
the GPU under WSL2 only from a recent Windows driver (Nsight Compute's system requirements: WSL2 only, Windows 10
build 19044+ with display driver 545 or newer), so the export holds what that platform records.

By construction (``synthetic.nsysexport``): the same generated run with its kernel table left out, with and without
a WSL2 kernel release in the target's environment.
"""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli

WSL2 = "5.15.90.1-microsoft-standard-WSL2"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _report(path: str) -> tuple[int, dict, str]:
    code, out, err = _run(["report", path, "--format", "json", "--cache-dir", "off"])
    return code, json.loads(out), err


def test_launches_without_kernels_under_wsl2_are_the_platforms_limit_not_damage(tmp_path):
    p = tmp_path / "wsl2.sqlite"
    nx.write(str(p), nx.NsysJob(steps=4, kernels_table=False, os_release=WSL2, nv_driver="536.40"))
    code, rep, err = _report(str(p))
    assert code == 0 and "damaged" not in err, err
    (host,) = rep["reports"][0]["hosts"]
    assert host["error"] is None and not host["damage"], host["damage"]
    job = host["job"]
    assert "WSL2" in job["kind_evidence"] and WSL2 in job["kind_evidence"] and "536.40" in job["kind_evidence"]
    (f,) = [f for f in rep["reports"][0]["findings"] if f["rule"] == "capture_quality" and "WSL2" in f["title"]]
    assert f["severity"] == "warning" and "not damaged" in f["summary"]
    assert "native Linux" in " ".join(a["text"] for a in f["actions"])
    code, _, _ = _run(["report", str(p), "--fail-on", "warning", "--cache-dir", "off"])
    assert code == 1


def test_the_same_export_on_native_linux_stays_lost_records(tmp_path):
    """The control: a native Linux kernel release (or none recorded) keeps the lost-records reading -- the GPU's
    records were lost, not the platform's limit -- and no word of WSL2."""
    for release in ("5.10.165-143.735.amzn2.x86_64", None):
        p = tmp_path / f"linux-{release}.sqlite"
        nx.write(str(p), nx.NsysJob(steps=4, kernels_table=False, os_release=release))
        code, rep, err = _report(str(p))
        (host,) = rep["reports"][0]["hosts"]
        assert code == 0 and not host["damage"], (release, err)
        assert "the GPU's side of the capture was lost" in host["job"]["kind_evidence"]
        titles = [f["title"] for f in rep["reports"][0]["findings"]]
        assert "The capture lost its GPU records" in titles and not [t for t in titles if "WSL2" in t], titles


def test_a_wsl2_export_with_its_kernels_is_read_as_usual(tmp_path):
    """WSL2 alone changes nothing: an export that holds its kernels is analysed like any other."""
    p = tmp_path / "wsl2-ok.sqlite"
    truth = nx.write(str(p), nx.NsysJob(steps=8, os_release=WSL2, nv_driver="560.94"))
    code, rep, err = _report(str(p))
    (host,) = rep["reports"][0]["hosts"]
    assert "WSL2" not in host["job"]["kind_evidence"]
    assert not [f for f in rep["reports"][0]["findings"] if "WSL2" in f["title"]]
    assert host["gpus"][0]["step_ms"] > 0 and truth.kernels[0] > 0


# The export of a WSL2 run with no CUDA record at all (StellaWava/benchmarking-n-profiling- ``report1.sqlite``
# @74baf909, no licence, read locally and not kept: ``tests/fixtures/wild/SURVEY.md``): Nsight 2024.6 under
# ``6.6.87.2-microsoft-standard-WSL2`` with CUDA tracing on; its DIAGNOSTIC_EVENT rows from the injection say the
# CUDA injection started, the driver (13.1) is newer than the build supports and CUPTI's flush failed; its stdout holds
# the benchmark's result.  Main read it "the program had not reached its GPU work".
_STREAMS_DDL = "CREATE TABLE ProcessStreams (globalPid INTEGER NOT NULL, filenameId INTEGER NOT NULL, contentId INTEGER NOT NULL)"
_DIAG_DDL = ("CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER NOT NULL, timestampType INTEGER NOT NULL, source INTEGER "
             "NOT NULL, severity INTEGER NOT NULL, text TEXT NOT NULL, globalPid INTEGER)")
_DIAGS = ((43_240_554, 1, 1, "Common injection library initialized successfully."),
          (89_844_955, 1, 2, ("Installed CUDA driver version (13.1) is not supported by this build of Nsight Systems. "
                              "CUDA trace will be collected using libraries for driver version 12.8")),
          (106_424_718, 3, 2, "No CUDA events collected. Does the process use CUDA?"),
          (323_312_863, 1, 1, "CUDA injection initialized successfully."),
          (967_837_605, 1, 3, "ActivityFlushAll returned 2: CUPTI_ERROR_INVALID_DEVICE"))


def _untraced(path: str, release: str | None, diags=_DIAGS, stdout: str | None = "SpMV Result Vector y: [30, 30, 40]\n") -> str:
    """A window with CUDA tracing on and no CUDA call (``write_window("no_cuda_call")`` of a native binary), with the
    target's kernel release, the injection's messages and the program's standard output as a real export keeps them."""
    import sqlite3

    nx.write_window(path, "no_cuda_call", process="./gpu_benchmark")
    con = sqlite3.connect(path)
    if release:
        con.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, 'Local (CLI)', 'SoftwareReleaseVersion', 618, ?)",
                    (nx.HW_BIT, release))
        con.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, 'Local (CLI)', 'NvDriverVersion', 205, '591.91')",
                    (nx.HW_BIT,))
    gpid = 1 << 48 | 4242 << 24
    con.execute(_DIAG_DDL)
    con.executemany("INSERT INTO DIAGNOSTIC_EVENT VALUES (?, 1, ?, ?, ?, ?)", [(t, src, sev, text, gpid)
                                                                               for t, src, sev, text in diags])
    if stdout is not None:
        con.execute(_STREAMS_DDL)
        top = con.execute("SELECT max(id) FROM StringIds").fetchone()[0]
        con.executemany("INSERT INTO StringIds VALUES (?, ?)",
                        [(top + 1, "/tmp/nvidia/nsight_systems/streams/pid_4242_stdout.log"), (top + 2, stdout)])
        con.execute("INSERT INTO ProcessStreams VALUES (?, ?, ?)", (gpid, top + 1, top + 2))
    con.commit()
    con.close()
    return path


def test_a_wsl2_window_without_any_cuda_record_whose_program_ran_is_not_a_window_put_wrong(tmp_path):
    code, rep, err = _report(_untraced(str(tmp_path / "wsl2-untraced.sqlite"), "6.6.87.2-microsoft-standard-WSL2"))
    assert code == 0, err
    (host,) = rep["reports"][0]["hosts"]
    ev = host["job"]["kind_evidence"]
    assert "had not reached" not in ev
    assert "loaded CUDA" in ev and "SpMV Result Vector y" in ev and "6.6.87.2-microsoft-standard-WSL2" in ev
    assert "CUPTI_ERROR_INVALID_DEVICE" in ev and "not supported by this build" in ev
    assert "No CUDA events collected" not in ev  # the profiler's analysis of its own output, not what failed
    titles = [f["title"] for f in rep["reports"][0]["findings"]]
    assert "Recorded under WSL2: the program's CUDA work was not traced there" in titles, titles
    assert not any("had not reached" in t for t in titles)


def test_without_wsl2_or_without_evidence_that_the_program_ran_the_window_reading_stays(tmp_path):
    """Controls: the same export on native Linux, and a WSL2 export whose program shows neither CUDA loaded nor any
    output, keep "the program had not reached its GPU work" -- nothing in them says more."""
    native = _untraced(str(tmp_path / "native.sqlite"), "5.15.0-91-generic")
    bare = _untraced(str(tmp_path / "bare.sqlite"), "6.6.87.2-microsoft-standard-WSL2", diags=_DIAGS[:1], stdout=None)
    for path in (native, bare):
        _, rep, _ = _report(path)
        titles = [f["title"] for f in rep["reports"][0]["findings"]]
        assert any("had not reached its GPU work" in t for t in titles), (path, titles)


def _with_stacks(path: str, modules: tuple[str, ...]) -> str:
    """Add the OS runtime call stacks an export keeps (``OSRT_CALLCHAINS``), one frame per library in ``modules``."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("CREATE TABLE OSRT_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, "
                "kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER, "
                "unwindMethod INTEGER, stackDepth INTEGER NOT NULL)")
    top = con.execute("SELECT max(id) FROM StringIds").fetchone()[0]
    for depth, module in enumerate(modules):
        con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(top + 1, "ioctl"), (top + 2, module)])
        con.execute("INSERT INTO OSRT_CALLCHAINS VALUES (1, ?, ?, 0, 0, 0, 0, 0, 1, ?)", (top + 1, top + 2, depth))
        top += 2
    con.commit()
    con.close()
    return path


#: The libraries the OS runtime calls' stacks pass through in mjmorano/Spin-tracking-New's ``report1.sqlite``
#: (@ 7c8f70d3, read locally only: no licence): an OpenACC program (``pgc++ -acc -gpu=managed``) profiled under WSL2
#: by Nsight Systems 2022.4, with empty standard output and error, no diagnostics and no CUDA table.
OPENACC_STACK = ("/usr/lib/x86_64-linux-gnu/libc-2.31.so", "/usr/lib/wsl/lib/libdxcore.so",
                 "/usr/lib/wsl/drivers/nvmdi.inf_amd64_1f4f13287900d9b3/libcuda.so.1.1",
                 "/opt/nvidia/hpc_sdk/Linux_x86_64/22.11/compilers/lib/libaccdevice.so")


def test_a_wsl2_program_whose_stacks_ran_inside_the_cuda_driver_loaded_cuda(tmp_path):
    """No injection message, no output: the call stacks alone show the program called into CUDA, so the window is the
    platform's untraced work (``wsl2_untraced``), not a program that had not reached its GPU work (was: "the program had
    not reached its GPU work"; on the real file, with no capture options kept, "no GPU work, high confidence")."""
    bare = _untraced(str(tmp_path / "stacks.sqlite"), "5.10.16.3-microsoft-standard-WSL2", diags=_DIAGS[:1],
                     stdout=None)
    code, rep, err = _report(_with_stacks(bare, OPENACC_STACK))
    assert code == 0, err
    (host,) = rep["reports"][0]["hosts"]
    assert "called into CUDA" in host["job"]["kind_evidence"] and "had not reached" not in host["job"]["kind_evidence"]
    titles = [f["title"] for f in rep["reports"][0]["findings"]]
    assert "Recorded under WSL2: the program's CUDA work was not traced there" in titles, titles


def test_stacks_without_the_cuda_driver_leave_the_window_reading(tmp_path):
    """Control: the same stacks without the CUDA driver's library (a CPU program's) show no CUDA use."""
    bare = _untraced(str(tmp_path / "cpu.sqlite"), "5.10.16.3-microsoft-standard-WSL2", diags=_DIAGS[:1], stdout=None)
    _, rep, _ = _report(_with_stacks(bare, tuple(m for m in OPENACC_STACK if "libcuda" not in m)))
    titles = [f["title"] for f in rep["reports"][0]["findings"]]
    assert any("had not reached its GPU work" in t for t in titles), titles


def test_a_native_export_without_cuda_tables_whose_stacks_ran_in_the_cuda_driver_was_not_traced(tmp_path):
    """An older export (no ``META_DATA_CAPTURE``: its options unknown) on native Linux with no CUDA table at all, whose
    call stacks run inside ``libcuda.so``: the program used CUDA and the profiler did not trace it -- GPU work of an
    unknown kind, low confidence, not "no GPU work, high confidence" (researchgroup-zx93920/MAP-Fusion23's
    ``report1.sqlite``/``report2.sqlite`` @ 28084e06, A100, Nsight 2022.4.2: read locally only, no licence)."""
    import sqlite3

    path = _untraced(str(tmp_path / "native.sqlite"), "3.10.0-1160.80.1.el7.x86_64", diags=(), stdout=None)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE META_DATA_CAPTURE")
    con.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    con.execute("CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
                "globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, "
                "callchainId INTEGER NOT NULL)")
    con.execute("INSERT INTO OSRT_API VALUES (?, ?, 27, ?, 1, 0, 0, 1)",
                (nx.SESSION_START_NS + 3_000_000, nx.SESSION_START_NS + 4_000_000, 1 << 48 | 4242 << 24 | 4242))
    con.commit()
    con.close()
    stacks = ("/usr/lib64/libc-2.17.so", "/usr/lib64/libcuda.so.520.61.05",
              "/usr/local/cuda-11.8/targets/x86_64-linux/lib/libcudart.so.11.8.89")
    for modules, called in ((stacks, True), (stacks[:1], False)):
        p = tmp_path / f"{called}.sqlite"
        shutil.copy(path, p)
        code, rep, err = _report(_with_stacks(str(p), modules))
        assert code == 0, err
        (host,) = rep["reports"][0]["hosts"]
        assert (host["job"]["kind"], "called into CUDA" in host["job"]["kind_evidence"]) == (
            ("unknown", True) if called else ("no_gpu", False)), host["job"]


def test_a_driver_version_kept_as_packed_digits_is_named_as_nvidia_names_the_release(tmp_path):
    """Nsight keeps ``NvDriverVersion`` dotted or as its digits run together.  The real exports' packed values are
    the releases their CUDA versions ship with (NVIDIA's release names: 530.30.02 with CUDA 12.1, 520.61.05 with
    11.8, 525.105.17 on Perlmutter's CUDA 12.0), read here from the files themselves; a WSL2 report names the Windows
    driver the same way (``51694`` = 516.94), and a value of no known layout is kept as written."""
    import sqlite3
    from pathlib import Path

    from tb_gpu_advisor.formats.nsys.reader import driver_version

    root = Path(__file__).resolve().parents[1] / "fixtures"
    expected = {"nsys_windows/nvtx_only_centerformer.sqlite": ("530.30.02", "12010"),
                "nsys_windows/failed_start_dynamicvit.sqlite": ("520.61.05", "11080"),
                "foreign/nsys_a100_cloverleaf/perlmutter-cloverleaf-cuda.sqlite": ("525.105.17", "12000"),
                "wild/streams_pinned_copies/report1.sqlite": ("560.94", "12060")}
    for rel, (release, cuda) in expected.items():
        con = sqlite3.connect(f"file:{root / rel}?mode=ro", uri=True)
        env = dict(con.execute("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN "
                                "('CudaDriverVersion', 'NvDriverVersion')"))
        con.close()
        assert env["CudaDriverVersion"] == cuda, rel
        assert driver_version(env["NvDriverVersion"]) == release, (rel, env["NvDriverVersion"])
    assert [driver_version(v) for v in ("5169400", "516940", "r535", " 536.40 ")] == ["516.94.00", "516940", "r535",
                                                                                      "536.40"]
    p = tmp_path / "wsl2_packed.sqlite"
    nx.write(str(p), nx.NsysJob(steps=4, kernels_table=False, os_release=WSL2, nv_driver="51694"))
    code, rep, _ = _report(str(p))
    job = rep["reports"][0]["hosts"][0]["job"]
    assert code == 0 and "Windows driver 516.94" in job["kind_evidence"], job["kind_evidence"]


def test_a_driver_recent_enough_for_wsl2_tracing_is_not_told_to_update(tmp_path):
    """LilySu/stanford-cs336-assignment2-systems ``test_current.sqlite`` (h37-survey9): WSL2, Windows driver 577.03, two
    launches and no kernel table, told to "update the Windows NVIDIA driver" -- but NVIDIA's profilers trace the GPU
    under WSL2 from driver 545 (``devices.nvidia.WSL_PROFILING_DRIVER``, Nsight Compute's system requirements).  With
    a driver that recent, the evidence and the fix say the driver is not why; 536.40 (older) keeps the update."""
    p = tmp_path / "wsl2-577.sqlite"
    nx.write(str(p), nx.NsysJob(steps=4, kernels_table=False, os_release=WSL2, nv_driver="577.03"))
    code, rep, err = _report(str(p))
    (host,) = rep["reports"][0]["hosts"]
    assert code == 0 and not host["damage"], err
    assert "577.03" in host["job"]["kind_evidence"] and "recent enough" in host["job"]["kind_evidence"]
    (f,) = [f for f in rep["reports"][0]["findings"] if f["rule"] == "capture_quality" and "WSL2" in f["title"]]
    fixes = " ".join(a["text"] for a in f["actions"]) + f["summary"]
    assert "update the Windows" not in fixes and "update the Windows driver" not in f["summary"]
    assert "Nsight Systems release" in fixes and "545" in fixes
    (tmp_path / "old").mkdir()
    old = tmp_path / "old" / "wsl2-536.sqlite"
    nx.write(str(old), nx.NsysJob(steps=4, kernels_table=False, os_release=WSL2, nv_driver="536.40"))
    _, rep, _ = _report(str(old))
    (f,) = [f for f in rep["reports"][0]["findings"] if f["rule"] == "capture_quality" and "WSL2" in f["title"]]
    assert "update the Windows NVIDIA driver" in " ".join(a["text"] for a in f["actions"])


def test_the_driver_version_is_read_as_nvidia_names_it():
    from tb_gpu_advisor.devices import nvidia

    assert nvidia.wsl_profiling_driver("577.03") is True and nvidia.wsl_profiling_driver("545.84") is True
    assert nvidia.wsl_profiling_driver("536.40") is False
    assert nvidia.wsl_profiling_driver("") is None and nvidia.wsl_profiling_driver(None) is None
    assert nvidia.wsl_profiling_driver("32.0.15.7703") is None  # Windows' own form: not NVIDIA's version
