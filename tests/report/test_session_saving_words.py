"""A session finding's per-host savings are printed as each host's own finding prints its saving (h37-review8): main's
wild/dlrm_v100 read "(Numbers from worker5_step_12 ...) for 9.11 ms of it" beside "session saving = mean over the 5
hosts ... (worker2_step_12 7.05 ms, worker4_step_12 8.888 ms, worker5_step_12 9.109 ms, ...)" -- one quantity in two
forms, and some to four digits an estimate does not hold.  Truth: each host's own finding (``HostReport.findings``)."""

from __future__ import annotations

import re

from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report


def test_each_hosts_saving_in_a_session_finding_is_its_own_findings_number():
    s = discover(str(FIXTURES / "wild" / "dlrm_v100"))[0]
    r = session_report(s)
    merged = [f for f in r.findings if f.saving and "session saving = mean over" in f.saving.assumption]
    assert merged  # host-bound on 5 hosts, input-bound on 7
    for f in merged:
        said = dict(re.findall(r"(\S+) (\d[\d.]* (?:ms|us|s))\b", f.saving.assumption.split("kept steps (", 1)[1]))
        own = {h.host: g.saving.ms_per_step for h in r.hosts for g in h.findings if g.rule == f.rule and g.saving}
        assert set(said) == set(own), (said, own)
        for host, v in own.items():
            assert said[host] == ms(v), (host, said[host], v)  # main: "9.109 ms" for 9.109
