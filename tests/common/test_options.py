"""``common.options``: the user's settings as one value -- how a request's text becomes one, what overrides what,
and what of it goes into a cache key."""

from __future__ import annotations

import pickle

import pytest

from tb_gpu_advisor.common.options import OptionError, UserOptions, parse_params, parse_positive, parse_query
from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS, T


@pytest.mark.parametrize("text,value", [("110000000", 110_000_000), ("1.1e8", 110_000_000), ("110_000_000", 110_000_000),
                                        ("110,000,000", 110_000_000), (" 7 ", 7), ("2.", 2)])
def test_params_are_whole_numbers_in_the_clis_spellings(text, value):
    assert parse_params(text) == value and isinstance(parse_params(text), int)


@pytest.mark.parametrize("text", ["", "abc", "1.5", "0", "-3", "+3", "nan", "inf", "1e400", "0x10", "1e8.5", "--1"])
def test_anything_else_is_refused_naming_the_setting(text):
    with pytest.raises(OptionError, match="^params: must be a positive whole number"):
        parse_params(text)


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "Infinity", "1e999", "6 GB/s", ""])
def test_a_bandwidth_or_flops_must_be_a_positive_finite_number(text):
    with pytest.raises(OptionError, match="^net_gbps: must be a positive number"):
        parse_positive(text, "net_gbps")
    assert parse_positive("6.25", "net_gbps") == 6.25 and parse_positive("1.2e15") == 1.2e15


def test_a_query_gives_the_settings_it_names_and_nothing_else():
    query = {"params": "1.1e8", "net_gbps": "", "model_flops": "3e12", "run": "r"}
    assert parse_query(query.get) == UserOptions(110_000_000, None, 3e12)
    assert parse_query({}.get) == UserOptions()
    with pytest.raises(OptionError, match="^model_flops:"):
        parse_query({"model_flops": "-1"}.get)
    # what the tab puts in its URL reads back to the same value
    opts = UserOptions(110_000_000, 6.5, 1.2e15)
    assert parse_query(opts.as_query().get) == opts and opts.as_query()["params"] == "110000000"


def test_a_request_overrides_the_flags_setting_by_setting():
    flags = UserOptions(params=1_000, net_gbps=12.0)
    assert flags.overridden_by(UserOptions(model_flops=5e12)) == UserOptions(1_000, 12.0, 5e12)
    assert flags.overridden_by(UserOptions(params=7)) == UserOptions(7, 12.0, None)
    assert flags.overridden_by(UserOptions()) == flags


def test_the_environment_counts_only_where_no_options_are_given(monkeypatch):
    """The command line leaves its settings in the environment for code handed no options; explicit options (the
    tab's, per request) never read it."""
    monkeypatch.setenv(ENV_NET_GBPS, "6")
    monkeypatch.setenv(ENV_MODEL_FLOPS, "-1")  # not positive: as if not given
    assert UserOptions.of(None) == UserOptions(None, 6.0, None)
    assert UserOptions.of(None, params=5) == UserOptions(5, 6.0, None)
    assert UserOptions.of(UserOptions()) == UserOptions()
    assert UserOptions.of(UserOptions(params=3), params=4).params == 4


def test_key_material_and_the_link():
    assert UserOptions(params=10).key_material() == {}  # params has its own slot in the key; nothing else given
    assert UserOptions(net_gbps=6, model_flops=2e12).key_material() == {"net_gbps": 6.0, "model_flops_per_step": 2e12}
    assert UserOptions().link_gbps == T("comm.net_GBps") and UserOptions(net_gbps=6.0).link_gbps == 6.0
    opts = UserOptions(1, 2.0, 3.0)
    assert pickle.loads(pickle.dumps(opts)) == opts and hash(opts) == hash(UserOptions(1, 2.0, 3.0))
