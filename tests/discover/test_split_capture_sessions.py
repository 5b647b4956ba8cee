"""Issue #37 (survey h37-xplane2, left 1): the hosts of one multi-host JAX/TF job land in sibling session folders
seconds apart, because each process names its folder by its own export second.  Discovery lists them as one
session; two captures of one host, and captures minutes apart, stay apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import jaxcapture
from tb_gpu_advisor.discover.logdir import discover, session_time
from tb_gpu_advisor.formats.xplane.layout import HOST_FOLDERS_WITHIN_S
from tb_gpu_advisor.model.logdir import find_session, find_stock_run
from tests.support.report_store import session_report


def _write_split(logdir: Path, folders: dict[str, str]) -> jaxcapture.JaxJob:
    """``jax_dp_2host_slow_link``'s hosts, each in the session folder ``folders`` names for it."""
    job = jaxcapture.jax_dp_2host_slow_link()
    for host, space in job.spaces.items():
        space.write(logdir / "r" / "plugins" / "profile" / folders[host] / f"{host}.xplane.pb")
    return job


def _findings(s) -> dict[str, str]:
    
    rep = session_report(s)
    return {f.rule: f.severity for f in rep.findings}


def test_one_job_s_hosts_in_sibling_folders_a_second_apart_are_one_session(tmp_path):
    """Truth by construction: the two hosts of one data-parallel job, node1's export a second after node0's.  One
    session of both hosts (the earliest folder's name and path, each host its own file), and the job's critical
    cross-host finding (the slow link, judged across both ranks) is back; each folder name still finds it."""
    _write_split(tmp_path, {"node0": "2026_01_01_00_00_59", "node1": "2026_01_01_00_01_00"})
    (s,) = discover(str(tmp_path))
    assert [h.host for h in s.hosts] == ["node0", "node1"]
    assert s.session == "2026_01_01_00_00_59" and s.path.endswith("2026_01_01_00_00_59")
    assert s.merged == ("2026_01_01_00_01_00",)
    assert [Path(h.path).parent.name for h in s.hosts] == ["2026_01_01_00_00_59", "2026_01_01_00_01_00"]
    assert find_session([s], "r", "2026_01_01_00_01_00") is s and find_stock_run([s], "r/2026_01_01_00_00_59") is s
    assert _findings(s).get("comm_bandwidth_low") == "critical"


def test_two_captures_of_one_host_a_second_apart_stay_two_sessions(tmp_path):
    """Control: one host's file in each of two folders a second apart is two captures of that host, never merged."""
    job = jaxcapture.jax_dp_2host_slow_link()
    space = job.spaces["node0"]
    for folder in ("2026_01_01_00_00_00", "2026_01_01_00_00_01"):
        space.write(tmp_path / "r" / "plugins" / "profile" / folder / "node0.xplane.pb")
    found = discover(str(tmp_path))
    assert [(s.session, len(s.hosts)) for s in found] == [("2026_01_01_00_00_01", 1), ("2026_01_01_00_00_00", 1)]


def test_a_whole_capture_then_another_a_second_later_stay_apart(tmp_path):
    """Control: two folders that each hold both hosts (two captures) stay apart however close their names."""
    job = jaxcapture.jax_dp_2host_slow_link()
    job.write(tmp_path, run="r", session="2026_01_01_00_00_00")
    job.write(tmp_path, run="r", session="2026_01_01_00_00_01")
    assert [len(s.hosts) for s in discover(str(tmp_path))] == [2, 2]


@pytest.mark.parametrize("later", ["2026_01_01_00_05_00", "2026_01_01_00_00_11"])
def test_hosts_in_folders_minutes_apart_stay_apart(tmp_path, later):
    """Control: folders further apart than one capture's exports can be (``HOST_FOLDERS_WITHIN_S``) are captures of
    their own, whatever hosts they hold; so are folders in different runs."""
    assert session_time(later) - session_time("2026_01_01_00_00_00") > HOST_FOLDERS_WITHIN_S  # the premise
    _write_split(tmp_path, {"node0": "2026_01_01_00_00_00", "node1": later})
    assert sorted(len(s.hosts) for s in discover(str(tmp_path))) == [1, 1]


def test_hosts_in_sibling_folders_of_different_runs_stay_apart(tmp_path):
    """Control: the same folder names under two runs are two runs' captures."""
    job = jaxcapture.jax_dp_2host_slow_link()
    job.spaces["node0"].write(tmp_path / "a" / "plugins" / "profile" / "2026_01_01_00_00_00" / "node0.xplane.pb")
    job.spaces["node1"].write(tmp_path / "b" / "plugins" / "profile" / "2026_01_01_00_00_01" / "node1.xplane.pb")
    assert [(s.run, len(s.hosts)) for s in discover(str(tmp_path))] == [("a", 1), ("b", 1)]


def test_three_hosts_chained_a_second_apart_are_bounded_by_the_earliest(tmp_path):
    """Folders join the earliest folder's session only within the bound of *its* time (no chain drifting on second
    by second); a host already in the session starts the next one."""
    job = jaxcapture.jax_dp_2host_slow_link()
    spaces = job.spaces
    for folder, host in [("2026_01_01_00_00_00", "node0"), ("2026_01_01_00_00_01", "node1"),
                         ("2026_01_01_00_00_02", "node0"), ("2026_01_01_00_00_03", "node1")]:
        spaces[host].write(tmp_path / "r" / "plugins" / "profile" / folder / f"{host}.xplane.pb")
    found = discover(str(tmp_path))
    assert [(s.session, s.merged, [h.host for h in s.hosts]) for s in found] == [
        ("2026_01_01_00_00_02", ("2026_01_01_00_00_03",), ["node0", "node1"]),
        ("2026_01_01_00_00_00", ("2026_01_01_00_00_01",), ["node0", "node1"])]


def test_either_folder_of_a_split_capture_names_it_and_a_file_is_its_own_folder_s(tmp_path):
    """``report DIR --session LATER`` (the later folder's name, or RUN/SESSION as the stock tab names it) selects the
    merged session; ``report FILE`` of the later folder's host reports that host under its own folder's name."""
    from tb_gpu_advisor.cli.report import select_sessions
    from tb_gpu_advisor.discover.logdir import locate_file
    from tb_gpu_advisor.runtime.advisor import Advisor

    _write_split(tmp_path, {"node0": "2026_01_01_00_00_59", "node1": "2026_01_01_00_01_00"})
    advisor = Advisor(str(tmp_path), cache="off")
    for name in ("2026_01_01_00_01_00", "r/2026_01_01_00_01_00", "2026_01_01_00_00_59"):
        ((s, hosts),) = select_sessions(advisor, None, name, None)
        assert s.session == "2026_01_01_00_00_59" and [h.host for h in hosts] == ["node0", "node1"], name
    node1 = tmp_path / "r" / "plugins" / "profile" / "2026_01_01_00_01_00" / "node1.xplane.pb"
    _, s, h = locate_file(str(node1))
    assert (s.session, [x.host for x in s.hosts], h.host) == ("2026_01_01_00_01_00", ["node1"], "node1")


_REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("logdir", ["demo_logs", "tests/fixtures", "../shared/profiles"])
def test_kept_logdirs_list_each_folder_as_its_own_session(logdir):
    """Control: no kept capture (the demo logdir, the fixtures, the shared real profiles) has a job split across
    folders, so each lists every session folder as a session of its own, as before."""
    root = (_REPO / logdir).resolve()
    if not root.is_dir():
        pytest.skip(f"{logdir} is not here")
    found = discover(str(root))
    assert found and all(not getattr(s, "merged", ()) for s in found)
    folders = {(s.run, s.session) for s in found}
    assert len(folders) == len(found)  # no two sessions share a name: none hides another's folder
