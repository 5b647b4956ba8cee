"""Every route's query parameters are checked strictly (issue 27 items 13 and 16).

Item 13: ``/trace?file=²`` and a 5,000-digit ``file`` were HTML 500s (``str.isdigit()`` accepts ``²``, ``int()`` then
fails; ``int()`` refuses 5,000 digits), and ``start_ms=١`` (an Arabic-Indic one) went on to read the file.  Every
parameter of every route is now ASCII, bounded in length, and a bad one is a plain 400 naming it.

Item 16: a 100,000-character name came back whole in the error; names are now echoed cut to 200 characters, in
errors and in the log.
"""

from __future__ import annotations

import logging
import os
from urllib.parse import urlencode

import pytest

from tb_gpu_advisor.common.fmt import MAX_ECHO_CHARS
from tb_gpu_advisor.serve import query
from tests.support.plugin_client import PREFIX, CountingAnalyzer, make_client, poll_report, write_profile

SESSION = "2024_01_01_00_00_00"
LONG = "a" * 100_000
#: Values no parameter may take: non-ASCII digits, too many digits, too long, blanks, NUL, words.
HOSTILE = ["²", "１", "١", "1" * 5000, "9" * 65, " 1", "1_0", "\x00", "nan", "inf", "0x1", "1e", "--1", LONG]
#: Each route with a good query, and the parameters it takes.
ROUTES = {
    "report": {"run": "run1", "session": SESSION},
    "report.md": {"run": "run1", "session": SESSION},
    "diff": {"base_run": "run1", "base_session": SESSION, "new_run": "run1", "new_session": SESSION},
    "diff.md": {"base_run": "run1", "base_session": SESSION, "new_run": "run1", "new_session": SESSION},
    "window": {"run": "run1", "session": SESSION, "host": "w0", "start_ms": "0", "end_ms": "5"},
    "trace": {"run": "run1", "session": SESSION, "host": "w0"},
}
SETTINGS = ("params", "net_gbps", "model_flops")
EXTRA = {"report": ["host", "params", "net_gbps", "model_flops"], "report.md": ["host", "params"],
         "diff": ["host", "params", "net_gbps", "model_flops"], "diff.md": ["host", "model_flops"],
         "window": ["params"], "trace": ["file"]}


@pytest.fixture
def logdir(tmp_path):
    write_profile(str(tmp_path), "run1", SESSION, "w0")
    return str(tmp_path)


def _get(client, route: str, params: dict):
    r = client.get(f"{PREFIX}/{route}?{urlencode(params)}")  # a 500 would raise here: the test client re-raises
    return r.status_code, r.get_data(as_text=True)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_no_value_of_any_parameter_of_any_route_is_a_500(logdir, route):
    """Each parameter of each route, set to each hostile value: a 400 or a 404 with a short plain message, never a
    500, and no analysis or file read started for a value that is not a number where a number is asked."""
    for key in [*ROUTES[route], *EXTRA[route]]:
        # the settings take a form field's " 1" and "110_000_000" on purpose (common.options.parse_query)
        for value in HOSTILE if key not in SETTINGS else [v for v in HOSTILE if v not in (" 1", "1_0")]:
            analyzer = CountingAnalyzer()
            client, plugin, _ = make_client(logdir, analyzer)
            code, body = _get(client, route, {**ROUTES[route], key: value})
            assert code in (400, 404), (route, key, value[:20], code, body[:200])
            assert len(body) < 2 * MAX_ECHO_CHARS + 200, (route, key, len(body))
            if not (route.startswith("diff") and key == "host"):  # a diff's host is one of both reports' hosts
                assert analyzer.calls == [] and plugin._windows.computations == 0, (route, key, value[:20])


def test_a_superscript_or_a_5000_digit_file_index_is_a_400_not_a_500(logdir):
    """The issue's two requests, before: ValueError out of ``int()`` (HTML 500)."""
    client, _, _ = make_client(logdir, CountingAnalyzer())
    for value in ("²", "1" * 5000):
        code, body = _get(client, "trace", {**ROUTES["trace"], "file": value})
        assert code == 400 and "file must be the index 0" in body, (code, body[:200])
    code, _ = _get(client, "trace", {**ROUTES["trace"], "file": "0"})
    assert code == 200


def test_a_window_bound_in_other_digits_is_refused_before_anything_is_read(logdir):
    """``start_ms=١`` was read as 1 by ``float()`` and the file was read for its timeline."""
    client, plugin, _ = make_client(logdir, CountingAnalyzer())
    code, body = _get(client, "window", {**ROUTES["window"], "start_ms": "١"})
    assert code == 400 and "start_ms must be a number" in body
    assert plugin._windows.computations == 0


@pytest.mark.parametrize("text,ok", [("0", 0.0), ("-12.5", -12.5), ("1e3", 1000.0), (".5", 0.5), ("+3.", 3.0),
                                     ("١", None), ("1_0", None), (" 1", None), ("nan", None), ("1" * 65, None)])
def test_numbers_are_plain_ascii_decimals(text, ok):
    from tensorboard import errors

    if ok is None:
        with pytest.raises(errors.InvalidArgumentError):
            query.number({"x": text}, "x", 1e9)
    else:
        assert query.number({"x": text}, "x", 1e9) == ok


def test_a_long_name_is_echoed_cut_and_a_longer_one_refused(logdir):
    """Item 16: a 4,000-character run name (as long as a path may be) is a 404 whose message holds its first 200
    characters; a 100,000-character one is a 400 that does not repeat it."""
    client, _, _ = make_client(logdir, CountingAnalyzer())
    code, body = _get(client, "report", {"run": "b" * 4000, "session": SESSION})
    assert code == 404 and "b" * MAX_ECHO_CHARS + "'… (4,000 characters)" in body and len(body) < 400, body[:300]
    code, body = _get(client, "report", {"run": LONG, "session": SESSION})
    assert code == 400 and "100,000 characters" in body and len(body) < 300
    code, body = _get(client, "report", {"run": "run1", "session": SESSION, "host": "h" * 4000})
    assert code == 404 and len(body) < 400


def test_a_long_run_name_is_logged_cut(tmp_path, caplog):
    """A run nested 15 folders deep has a 3,000-character name; its failing analysis logs it cut."""
    run = "/".join(["r" * 199] * 15)
    write_profile(str(tmp_path), run, SESSION, "w0")
    client, _, _ = make_client(str(tmp_path), CountingAnalyzer(fail=True))
    with caplog.at_level(logging.DEBUG):
        r = poll_report(client, f"{PREFIX}/report?{urlencode({'run': run, 'session': SESSION})}")
    assert r.status_code == 500
    logged = [rec.getMessage() for rec in caplog.records]
    assert logged, "the failure is logged"
    assert all(run not in m for m in logged), "the whole name is never logged"
    assert max(len(m) for m in logged) < 2 * MAX_ECHO_CHARS + 200


def test_names_longer_than_any_path_are_refused_by_the_query_module():
    from tensorboard import errors

    assert query.name({"run": "x" * query.MAX_NAME_CHARS}, "run") == "x" * query.MAX_NAME_CHARS
    with pytest.raises(errors.InvalidArgumentError):
        query.name({"run": "x" * (query.MAX_NAME_CHARS + 1)}, "run")
    assert query.name({}, "host", required=False) is None


def test_the_route_table_is_the_audited_one(logdir):
    """A new route must be added to ROUTES above, so its parameters are audited too."""
    client, plugin, _ = make_client(logdir, CountingAnalyzer())
    data = {r.lstrip("/") for r in plugin.get_plugin_apps()} - {"index.js", "static/*", "runs"}
    assert data == set(ROUTES)
    assert os.path.isdir(logdir)
