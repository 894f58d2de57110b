"""Rests travels to Ray workers (issue 42 item 1 follow-up): it pickles, its lock made anew."""
from __future__ import annotations

import pickle
import threading

from searchkit.http_client import Rests


def test_rests_pickles_with_a_fresh_lock_and_its_state():
    r = Rests(2, cooldown=5.0, max_cooldown=50.0)
    r.failed(1)
    copy = pickle.loads(pickle.dumps(r))
    assert copy.cooldown == 5.0 and copy.max_cooldown == 50.0
    assert copy.failures_in_a_row == [0, 1] and copy.resting_until == r.resting_until
    assert isinstance(copy.lock, type(threading.Lock())) and copy.lock is not r.lock
    assert copy.order() == [0, 1] and copy.answered(1) is True
    assert r.failures_in_a_row == [0, 1]  # the original is untouched
