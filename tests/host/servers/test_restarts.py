"""The restart budget: at most N restarts in any window of W seconds, on a clock the test moves."""

from __future__ import annotations

from cat_code.host.servers.restarts import RestartBudget, RestartPolicy


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_three_restarts_fit_in_a_minute_and_the_fourth_does_not() -> None:
    clock = Clock()
    budget = RestartBudget(RestartPolicy(clock=clock))
    for _ in range(3):
        assert budget.take()
        clock.now += 19
    assert not budget.take()
    assert not budget.take()  # a refusal spends nothing


def test_the_window_slides_one_restart_at_a_time() -> None:
    clock = Clock()
    budget = RestartBudget(RestartPolicy(max_restarts=3, window_s=60, clock=clock))
    for at in (0, 10, 20):
        clock.now = at
        assert budget.take()
    clock.now = 59.99
    assert not budget.take()
    clock.now = 60  # the restart at 0 has left the window, the others not
    assert budget.take()
    assert not budget.take()
    clock.now = 70
    assert budget.take()


def test_reset_empties_the_window() -> None:
    clock = Clock()
    budget = RestartBudget(RestartPolicy(max_restarts=1, window_s=60, clock=clock))
    assert budget.take() and not budget.take()
    budget.reset()
    assert budget.take()


def test_the_policy_describes_itself() -> None:
    assert RestartPolicy().describe() == "3 restart(s) in 60 s"
    assert RestartPolicy(max_restarts=5, window_s=0.5).describe() == "5 restart(s) in 0.5 s"
