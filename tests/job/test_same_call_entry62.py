"""A rank's collective waits for a peer until that peer enters the SAME call, not any collective (h37-phase61
*Left* 1): ``job.peers.entered_with`` matches each of the rank's calls to the peer's call that ends with it (the
ranks of a group leave a collective together), as the collectives matcher pairs calls, and only the time both are
inside that call is "entered by every peer".

Real: ``wild/tp_rtx4090_two_ranks`` (two TP ranks on one RTX 4090 machine, PROVENANCE.md), read by hand on the
files' shared clock (ms from rank 0's first collective, SURVEY h37-phase61): rank 0 enters its first AllGather at
97.74 while rank 1 is still in its ReduceScatter until 97.98 and enters the AllGather at 98.07 -- 0.33 ms of waiting
for rank 1, which the "any collective" reading cut to 0.09 (97.98-98.07).  Base: rank 0's AllGather exposed 472.81
ms, start-up 435.05 ms, in both layouts; by hand 473.05 / 434.81 -- asserted in both layouts by
``test_own_entry_every_layout61.test_the_real_pair_rank_zero_reads_its_waits_for_rank_one_in_both_layouts``."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.job.peers import entered_with


def _iv(*pairs: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def test_a_peer_in_its_previous_call_has_not_entered_this_one():
    """By construction: the rank's call runs 10-20; the peer finishes its previous call at 12 and enters this one at
    14 (both leave at 20).  Entered by every peer: 14-20 only (base's "any collective": 10-12 and 14-20).  A peer
    whose calls end with none of the rank's is in no group of them and is left out.  Fails on base (no
    ``entered_with``)."""
    own = _iv((10, 20))
    peer = _iv((5, 12), (14, 20))
    s, e = entered_with(own, [peer])
    assert s.tolist() == [14] and e.tolist() == [20]
    stranger = _iv((40, 60))  # another group's call: ends with none of the rank's
    s, e = entered_with(own, [peer, stranger])
    assert s.tolist() == [14] and e.tolist() == [20]
    assert entered_with(own, []) is None
