"""Retrace targets, advantages, n-step returns and DPER priorities against brute force.

The references below evaluate the explicit formulas of docs/design.md §7 (the double sum and
product for Retrace) step by step in float64 numpy, so they share no code and no recursion with
the implementation under test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from distrl.algos import dper_priority, n_step_returns, retrace_targets

B, T = 12, 7
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5}


@dataclass
class Window:
    """A random batch of windows, as numpy float64 (for the reference) plus its lengths."""

    rewards: np.ndarray
    values: np.ndarray
    bootstrap: np.ndarray
    rhos: np.ndarray
    dones: np.ndarray
    lengths: np.ndarray

    @property
    def mask(self) -> np.ndarray:
        return (np.arange(T)[None, :] < self.lengths[:, None]).astype(np.float64)

    def torch(self, dtype: torch.dtype, *, pad: float = float("nan")) -> dict[str, torch.Tensor]:
        """Torch inputs with ``pad`` written into every padded position, to prove it is unread."""
        mask = self.mask

        def padded(x: np.ndarray) -> torch.Tensor:
            return torch.tensor(np.where(mask > 0, x, pad), dtype=dtype)

        # A NaN bootstrap where the last valid step is terminal: it must not be used either.
        last = self.lengths - 1
        terminal_end = self.dones[np.arange(B), last] > 0
        bootstrap = np.where(terminal_end, np.nan, self.bootstrap)
        return {
            "rewards": padded(self.rewards),
            "values": padded(self.values),
            "bootstrap_values": torch.tensor(bootstrap, dtype=dtype),
            "rhos": padded(self.rhos),
            "dones": torch.tensor(np.where(mask > 0, self.dones, 1.0), dtype=dtype),
            "mask": torch.tensor(mask, dtype=dtype),
        }


def random_window(seed: int, *, done_rate: float = 0.2) -> Window:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, T + 1, size=B)
    lengths[0] = T  # always one full window, so the bootstrap after step T-1 is exercised
    dones = (rng.random((B, T)) < done_rate).astype(np.float64)
    dones[1, T - 1] = 1.0  # a full window that ends in a terminal step
    return Window(
        rewards=rng.normal(size=(B, T)),
        values=rng.normal(size=(B, T)),
        bootstrap=rng.normal(size=B),
        rhos=np.exp(rng.normal(scale=0.7, size=(B, T))),  # both sides of 1, so clips bite
        dones=dones,
        lengths=lengths,
    )


# --- references (explicit formulas, float64) -------------------------------------------------


def next_value(w: Window, b: int, t: int) -> float:
    """V(s_{t+1}): the next value in the window, or the bootstrap after the last valid step."""
    return w.values[b, t + 1] if t + 1 < w.lengths[b] else w.bootstrap[b]


def reference_deltas(w: Window, gamma: float) -> np.ndarray:
    deltas = np.zeros((B, T))
    for b in range(B):
        for t in range(w.lengths[b]):
            not_done = 1.0 - w.dones[b, t]
            deltas[b, t] = w.rewards[b, t] + gamma * next_value(w, b, t) * not_done - w.values[b, t]
    return deltas


def segment_end(w: Window, b: int, t: int) -> int:
    """The last k >= t the sum reaches: the first terminal step, else the last valid step."""
    for k in range(t, w.lengths[b]):
        if w.dones[b, k] > 0:
            return k
    return w.lengths[b] - 1


def reference_targets(
    w: Window, *, gamma: float, lam: float, c_bar: float, rho_bar: float
) -> np.ndarray:
    """The explicit Retrace sum, term by term:

        v_t = V(s_t) + sum_{k=t}^{end} gamma^(k-t) (prod_{i=t}^{k-1} c_i) min(rho_bar, rho_k) d_k

    where d_k is the TD error delta_k and ``end`` is the episode end or the window end.
    """
    deltas = reference_deltas(w, gamma)
    c = lam * np.minimum(c_bar, w.rhos)
    targets = np.zeros((B, T))
    for b in range(B):
        for t in range(w.lengths[b]):
            total = 0.0
            for k in range(t, segment_end(w, b, t) + 1):
                trace = np.prod([c[b, i] for i in range(t, k)])  # empty product = 1
                total += gamma ** (k - t) * trace * min(rho_bar, w.rhos[b, k]) * deltas[b, k]
            targets[b, t] = w.values[b, t] + total
    return targets


def reference_advantages(w: Window, targets: np.ndarray, gamma: float) -> np.ndarray:
    """A_t = r_t + gamma v_{t+1} (1 - done_t) - V(s_t); v_{t+1} = bootstrap after the last step."""
    adv = np.zeros((B, T))
    for b in range(B):
        for t in range(w.lengths[b]):
            v_next = targets[b, t + 1] if t + 1 < w.lengths[b] else w.bootstrap[b]
            not_done = 1.0 - w.dones[b, t]
            adv[b, t] = w.rewards[b, t] + gamma * v_next * not_done - w.values[b, t]
    return adv


def reference_n_step(w: Window, gamma: float) -> np.ndarray:
    """G_t = sum_{k=t}^{end} gamma^(k-t) r_k + gamma^(end-t+1) V(s_T) [end is not terminal]."""
    returns = np.zeros((B, T))
    for b in range(B):
        for t in range(w.lengths[b]):
            end = segment_end(w, b, t)
            g = sum(gamma ** (k - t) * w.rewards[b, k] for k in range(t, end + 1))
            if w.dones[b, end] == 0:
                g += gamma ** (end - t + 1) * w.bootstrap[b]
            returns[b, t] = g
    return returns


def assert_close(actual: torch.Tensor, expected: np.ndarray, dtype: torch.dtype) -> None:
    assert actual.dtype == dtype
    np.testing.assert_allclose(
        actual.double().numpy(), expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype]
    )


# --- tests -----------------------------------------------------------------------------------

HYPERPARAMETERS = [
    # (gamma, lam, c_bar, rho_bar)
    (0.99, 1.0, 1.0, 1.0),
    (0.9, 0.95, 1.0, 1.0),
    (0.8, 0.0, 1.0, 1.0),
    (0.95, 1.0, 2.0, 0.5),
    (0.7, 0.5, 0.8, 3.0),
    (1.0, 1.0, float("inf"), float("inf")),
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(("gamma", "lam", "c_bar", "rho_bar"), HYPERPARAMETERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_retrace_matches_explicit_sum(
    seed: int, gamma: float, lam: float, c_bar: float, rho_bar: float, dtype: torch.dtype
) -> None:
    w = random_window(seed)
    out = retrace_targets(**w.torch(dtype), gamma=gamma, lam=lam, c_bar=c_bar, rho_bar=rho_bar)
    targets = reference_targets(w, gamma=gamma, lam=lam, c_bar=c_bar, rho_bar=rho_bar)
    assert_close(out.targets, targets, dtype)
    assert_close(out.deltas, reference_deltas(w, gamma), dtype)
    assert_close(out.advantages, reference_advantages(w, targets, gamma), dtype)


def test_windows_cover_the_edge_cases() -> None:
    """The random data really has episode ends inside windows, padding, and terminal ends."""
    for seed in (0, 1):
        w = random_window(seed)
        inside = [t for b in range(B) for t in range(w.lengths[b] - 1) if w.dones[b, t] > 0]
        assert inside, "no episode end inside a window"
        assert (w.lengths < T).any(), "no padded window"
        assert (w.rhos > 1).any() and (w.rhos < 1).any()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(("c_bar", "rho_bar"), [(1.0, 1.0), (1.5, 4.0)])
def test_on_policy_retrace_is_n_step_return(
    c_bar: float, rho_bar: float, dtype: torch.dtype
) -> None:
    w = random_window(3)
    w.rhos = np.ones((B, T))
    inputs = w.torch(dtype)
    out = retrace_targets(**inputs, gamma=0.9, lam=1.0, c_bar=c_bar, rho_bar=rho_bar)
    returns = n_step_returns(
        inputs["rewards"], inputs["bootstrap_values"], inputs["dones"], inputs["mask"], 0.9
    )
    assert_close(returns, reference_n_step(w, 0.9), dtype)
    torch.testing.assert_close(out.targets, returns, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("rho_bar", [1.0, 0.3, 5.0])
def test_lambda_zero_is_one_step_td(rho_bar: float, dtype: torch.dtype) -> None:
    w = random_window(4)
    inputs = w.torch(dtype)
    out = retrace_targets(**inputs, gamma=0.95, lam=0.0, c_bar=1.0, rho_bar=rho_bar)
    deltas = reference_deltas(w, 0.95)
    # v_t = V(s_t) + min(rho_bar, rho_t) delta_t
    expected = (w.values + np.minimum(rho_bar, w.rhos) * deltas) * w.mask
    assert_close(out.targets, expected, dtype)


def test_padding_is_zero_and_never_read() -> None:
    w = random_window(5)
    outputs = []
    for pad in (float("nan"), 1e30, -7.0):
        out = retrace_targets(
            **w.torch(torch.float64, pad=pad), gamma=0.9, lam=0.9, c_bar=1.0, rho_bar=1.0
        )
        for field in out:
            assert torch.isfinite(field).all()
            assert (field[torch.tensor(w.mask) == 0] == 0).all()
        outputs.append(out)
    for other in outputs[1:]:
        for a, b in zip(outputs[0], other, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_n_step_returns_match_reference() -> None:
    w = random_window(6, done_rate=0.3)
    inputs = w.torch(torch.float64)
    returns = n_step_returns(
        inputs["rewards"], inputs["bootstrap_values"], inputs["dones"], inputs["mask"], gamma=0.97
    )
    assert_close(returns, reference_n_step(w, 0.97), torch.float64)


def test_outputs_carry_no_gradient() -> None:
    w = random_window(7)
    inputs = w.torch(torch.float64, pad=0.0)
    inputs["values"].requires_grad_(True)
    inputs["bootstrap_values"] = torch.tensor(w.bootstrap, requires_grad=True)
    inputs["rhos"].requires_grad_(True)
    out = retrace_targets(**inputs, gamma=0.9, lam=1.0, c_bar=1.0, rho_bar=1.0)
    assert not any(field.requires_grad for field in out)
    returns = n_step_returns(
        inputs["rewards"], inputs["bootstrap_values"], inputs["dones"], inputs["mask"], 0.9
    )
    assert not returns.requires_grad
    entropies = torch.rand(B, T, requires_grad=True, dtype=torch.float64)
    priority = dper_priority(
        out.deltas, inputs["rhos"], entropies, inputs["mask"], w1=1.0, w2=1.0, w3=1.0
    )
    assert not priority.requires_grad


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_dper_priority_matches_numpy(dtype: torch.dtype) -> None:
    w = random_window(8)
    rng = np.random.default_rng(8)
    deltas = rng.normal(size=(B, T))
    entropies = rng.random((B, T)) * 3
    mask = w.mask
    w1, w2, w3 = 0.6, 0.3, 0.1
    expected = np.array(
        [
            w1 * np.abs(deltas[b, : w.lengths[b]]).mean()
            + w2 * w.rhos[b, : w.lengths[b]].mean()
            + w3 * entropies[b, : w.lengths[b]].mean()
            for b in range(B)
        ]
    )

    def padded(x: np.ndarray) -> torch.Tensor:
        return torch.tensor(np.where(mask > 0, x, np.nan), dtype=dtype)

    priority = dper_priority(
        padded(np.abs(deltas)),
        padded(w.rhos),
        padded(entropies),
        torch.tensor(mask, dtype=dtype),
        w1=w1,
        w2=w2,
        w3=w3,
    )
    assert priority.shape == (B,)
    assert_close(priority, expected, dtype)


def test_dper_priority_of_an_empty_window_is_zero() -> None:
    mask = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    ones = torch.ones(2, 3)
    priority = dper_priority(ones, ones, ones, mask, w1=1.0, w2=1.0, w3=1.0)
    torch.testing.assert_close(priority, torch.tensor([3.0, 0.0]))


def test_bad_inputs_are_named() -> None:
    w = random_window(9)
    inputs = w.torch(torch.float64, pad=0.0)
    kwargs = {"gamma": 0.9, "lam": 1.0, "c_bar": 1.0, "rho_bar": 1.0}

    holed = inputs | {"mask": torch.tensor([[1.0, 0.0, 1.0] + [0.0] * (T - 3)] * B)}
    with pytest.raises(ValueError, match="mask row 0: a valid step follows padding"):
        retrace_targets(**holed, **kwargs)

    short = inputs | {"rhos": inputs["rhos"][:, :-1]}
    with pytest.raises(ValueError, match="rhos: shape"):
        retrace_targets(**short, **kwargs)

    column = inputs | {"bootstrap_values": inputs["bootstrap_values"][:, None]}
    with pytest.raises(ValueError, match=r"bootstrap_values: expected shape \[12\]"):
        retrace_targets(**column, **kwargs)
