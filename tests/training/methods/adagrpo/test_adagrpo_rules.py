"""AdaGRPO's pure rules (MobileRL §2.2): SPA on hand-computed cases, group advantages, the AdaPR
buffer's admission and mixture, FCF's cooldown and removal over synthetic epochs."""

from __future__ import annotations

import math
import random

import pytest

from training.methods.adagrpo.rules import (
    FailureCurriculum,
    PositiveReplayBuffer,
    Scored,
    group_advantages,
    mixed_batch,
    replay_update_batch,
    spa_rewards,
    trajectory_step_weights,
    weighted_sample,
)


# --- SPA (eq. 2) -------------------------------------------------------------------------------

def test_spa_hand_computed():
    # successes of length 4, 8, 5: T_min = 4; R = 1 - (T - 4) / T
    got = spa_rewards([1, 1, 0, 1], [4, 8, 3, 5], [True, True, False, True], alpha=1.0)
    assert got == pytest.approx([1.0, 0.5, 0.0, 0.8])


def test_spa_alpha_half():
    # T_min = 2: 1 - 0.5 * (10 - 2) / 10 = 0.6
    assert spa_rewards([1, 1], [2, 10], [True, True], alpha=0.5) == pytest.approx([1.0, 0.6])


def test_spa_leaves_failures_and_groups_without_success():
    assert spa_rewards([0.3, 0.0], [2, 9], [False, False]) == [0.3, 0.0]
    # a shaped failure shorter than the shortest success is not rewarded for being short
    assert spa_rewards([1.0, 0.4], [6, 2], [True, False]) == pytest.approx([1.0, 0.4])


@pytest.mark.parametrize("bad", [dict(alpha=0.0), dict(alpha=1.5)])
def test_spa_rejects_alpha_outside_the_paper_range(bad):
    with pytest.raises(ValueError, match="alpha"):
        spa_rewards([1], [1], [True], **bad)


def test_spa_rejects_ragged_or_empty_trajectories():
    with pytest.raises(ValueError, match="2 rewards, 1 lengths"):
        spa_rewards([1, 0], [3], [True, False])
    with pytest.raises(ValueError, match="at least one step"):
        spa_rewards([1], [0], [True])


# --- advantages and eq. 1 weights ---------------------------------------------------------------

def test_group_advantages_are_standardised_and_zero_for_flat_groups():
    adv = group_advantages([1.0, 0.0, 0.0, 0.0])
    # mean 0.25, sample std 0.5
    assert adv == pytest.approx([1.5, -0.5, -0.5, -0.5], rel=1e-3)
    assert group_advantages([0.0, 0.0, 0.0]) == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="at least 2"):
        group_advantages([1.0])


def test_step_weights_make_every_trajectory_count_once():
    lengths = [2, 6]
    weights = trajectory_step_weights(lengths)
    rows = sum(lengths)
    # a mean over rows of weight x per-step loss 1 gives each trajectory 1/N
    per_trajectory = [w * t / rows for w, t in zip(weights, lengths)]
    assert per_trajectory == pytest.approx([0.5, 0.5])


# --- AdaPR --------------------------------------------------------------------------------------

def _rollouts(advantages, successes):
    return [Scored(a, s, f"t{i}") for i, (a, s) in enumerate(zip(advantages, successes))]


def test_buffer_admits_the_top_kappa_successes_with_positive_advantage():
    buffer = PositiveReplayBuffer(capacity=256, kappa=0.25)
    rollouts = _rollouts([1.5, 0.9, -0.5, 2.0, 0.0, 0.3, -1.0, 1.2], [True, True, False, True, True, True, False, False])
    # quota floor(0.25 * 8) = 2: the two highest-advantage successes (t3: 2.0, t0: 1.5); t7 (1.2) failed
    assert buffer.admit(rollouts) == 2
    assert [s.payload for s in buffer.items] == ["t3", "t0"]


def test_buffer_never_admits_failures_or_non_positive_advantage():
    buffer = PositiveReplayBuffer(capacity=8, kappa=1.0)
    assert buffer.admit(_rollouts([2.0, 0.0, -1.0], [False, True, True])) == 0
    assert len(buffer) == 0


def test_buffer_keeps_the_highest_advantages_when_full():
    buffer = PositiveReplayBuffer(capacity=3, kappa=1.0)
    buffer.admit(_rollouts([1.0, 2.0, 3.0], [True] * 3))
    admitted = buffer.admit([Scored(2.5, True, "new"), Scored(0.5, True, "low")])
    assert admitted == 1  # "low" is evicted at once
    assert [s.advantage for s in buffer.items] == [3.0, 2.5, 2.0]


def test_mixture_draws_at_most_gamma_m_replays_and_fills_with_on_policy():
    buffer = PositiveReplayBuffer(capacity=16, kappa=1.0)
    buffer.admit(_rollouts([5, 4, 3, 2, 1], [True] * 5))
    on_policy = _rollouts([0.7] * 10, [False] * 10)
    batch, replayed = mixed_batch(on_policy, buffer, batch_size=8, gamma=0.25, rng=random.Random(0))
    assert replayed == 2 and len(batch) == 8
    assert [s.advantage for s in batch[:2]] == [5, 4]  # highest advantage first
    assert len(buffer) == 3  # drawn entries leave the buffer (replayed about once)
    # gamma 0: on-policy only; gamma 1 with a small buffer: all of it, then on-policy
    assert mixed_batch(on_policy, buffer, 4, 0.0, random.Random(0))[1] == 0
    batch, replayed = mixed_batch(on_policy, buffer, 12, 1.0, random.Random(0))
    assert replayed == 3 and len(batch) == 12 and len(buffer) == 0


def test_by_default_an_update_replays_earlier_epochs_successes_and_admits_its_own_after():
    """MobileRL §2.2.2: the buffer holds earlier iterations' successes; the first update replays nothing and
    the buffer fills over epochs (figure 3(b)), each stored success replayed about once."""
    buffer = PositiveReplayBuffer(capacity=16, kappa=0.5)
    epoch1 = [Scored(1.5, True, "e1-win"), Scored(-0.5, False, "e1-a"), Scored(-0.5, False, "e1-b"),
              Scored(-0.5, False, "e1-c")]
    batch, replayed = replay_update_batch(epoch1, buffer, 4, 1.0, "earlier_epochs", random.Random(0))
    assert replayed == 0 and sorted(s.payload for s in batch) == ["e1-a", "e1-b", "e1-c", "e1-win"]
    assert [s.payload for s in buffer.items] == ["e1-win"]
    epoch2 = [Scored(0.0, False, "e2-flat"), Scored(1.0, True, "e2-win"), Scored(-1.0, False, "e2-lose")]
    batch, replayed = replay_update_batch(epoch2, buffer, 4, 1.0, "earlier_epochs", random.Random(0))
    assert replayed == 1 and batch[0].payload == "e1-win"  # replayed beside the informative on-policy ones
    assert sorted(s.payload for s in batch[1:]) == ["e2-lose", "e2-win"]
    assert [s.payload for s in buffer.items] == ["e2-win"]


def test_the_same_epoch_order_replays_an_epochs_own_successes_at_once():
    buffer = PositiveReplayBuffer(capacity=16, kappa=0.5)
    epoch1 = [Scored(1.5, True, "win"), Scored(-0.5, False, "a"), Scored(-0.5, False, "b"), Scored(-0.5, False, "c")]
    batch, replayed = replay_update_batch(epoch1, buffer, 5, 1.0, "same_epoch", random.Random(0))
    assert replayed == 1 and batch[0].payload == "win" and len(buffer) == 0
    assert [s.payload for s in batch].count("win") == 2  # its on-policy copy as well
    with pytest.raises(ValueError, match="replay_from"):
        replay_update_batch(epoch1, buffer, 4, 1.0, "later", random.Random(0))


# --- FCF ----------------------------------------------------------------------------------------

def test_fcf_cooldown_then_removal_over_synthetic_epochs():
    fcf = FailureCurriculum(fail_epochs=2, cooldown_epochs=3)
    weights = []
    for _ in range(7):  # task "hard" fails every epoch it is drawn; "easy" always scores
        fcf.record_epoch({"hard": True, "easy": False} if fcf.weight("hard") > 0 else {"easy": False})
        weights.append(fcf.weight("hard"))
    # epochs 1: f=1 (weight 1); 2: f=2 starts the cooldown; epochs 3, 4 cool down; removed after epoch 5
    assert weights[0] == 1.0
    assert weights[1] == pytest.approx(math.exp(-2))
    assert weights[2] == pytest.approx(math.exp(-3))
    assert weights[3] == pytest.approx(math.exp(-4))
    assert weights[4:] == [0.0, 0.0, 0.0]
    assert fcf.pool(["hard", "easy"]) == ["easy"]
    assert fcf.weight("easy") == 1.0 and fcf.counts() == {"cooling_down": 0, "removed": 1}


def test_fcf_cooldown_counts_down_when_not_drawn_and_a_success_ends_it():
    fcf = FailureCurriculum()
    fcf.record_epoch({"a": True, "b": True})
    fcf.record_epoch({"a": True, "b": True})  # both enter the cooldown
    fcf.record_epoch({})  # neither drawn: cooldowns still run
    fcf.record_epoch({"b": False})  # b scored: its cooldown ends, f resets
    assert fcf.weight("b") == 1.0 and fcf.tasks["b"].failed_epochs == 0
    fcf.record_epoch({})
    assert fcf.weight("a") == 0.0


def test_fcf_one_failure_then_success_never_cools_down():
    fcf = FailureCurriculum()
    for failed in (True, False, True, False):
        fcf.record_epoch({"t": failed})
    assert fcf.weight("t") == 1.0 and fcf.epochs_seen == 4


def test_fcf_history_survives_a_round_trip_and_bad_text_is_a_clear_error():
    fcf = FailureCurriculum()
    for _ in range(3):
        fcf.record_epoch({"t": True})
    again = FailureCurriculum.from_json(fcf.to_json())
    assert again.tasks == fcf.tasks and again.epochs_seen == 3
    assert again.weight("t") == fcf.weight("t") < 1
    assert FailureCurriculum.from_json(None).tasks == {}
    with pytest.raises(ValueError, match="failure history is unreadable"):
        FailureCurriculum.from_json('{"tasks": 3}')


def test_weighted_sample_never_draws_zero_weight_and_prefers_heavy_keys():
    rng = random.Random(0)
    counts = {"heavy": 0, "light": 0}
    for _ in range(400):
        drawn = weighted_sample(["heavy", "light", "gone"], [1.0, math.exp(-3), 0.0], 1, rng)
        assert drawn != ["gone"]
        counts[drawn[0]] += 1
    assert counts["heavy"] > 10 * counts["light"]
    assert sorted(weighted_sample(["a", "b", "gone"], [1, 1, 0], 5, rng)) == ["a", "b"]
