"""A gymnasium stand-in with one environment, CartPole-v1 (tools/pytorch_examples.py).

The cart-pole dynamics and limits are those Gymnasium documents for CartPole-v1 (Euler
steps of 0.02 s, failure past 12 degrees or 2.4 units, 500 steps at most). The episode
reward threshold the examples stop at comes from PYEX_REWARD_THRESHOLD (default 475, the
real one; the runner lowers it so a run ends after a few episodes).
"""

from __future__ import annotations

import math
import os
from types import SimpleNamespace

import numpy as np

__all__ = ["make"]


class _Discrete:
    def __init__(self, n: int) -> None:
        self.n = n

    def sample(self) -> int:
        return int(np.random.randint(self.n))


class CartPole:
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_limit, x_limit, max_steps = 12 * 2 * math.pi / 360, 2.4, 500

    def __init__(self, render_mode=None) -> None:
        self.render_mode = render_mode
        self.action_space = _Discrete(2)
        self.observation_space = SimpleNamespace(shape=(4,))
        threshold = float(os.environ.get("PYEX_REWARD_THRESHOLD", 475.0))
        self.spec = SimpleNamespace(
            id="CartPole-v1", reward_threshold=threshold, max_episode_steps=self.max_steps
        )
        self._rng = np.random.default_rng()
        self.state = np.zeros(4)
        self.steps = 0

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self._rng.uniform(-0.05, 0.05, size=4)
        self.steps = 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if int(action) == 1 else -self.force_mag
        total = self.masspole + self.masscart
        pole_ml = self.masspole * self.length
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + pole_ml * theta_dot**2 * sin) / total
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos**2 / total)
        )
        x_acc = temp - pole_ml * theta_acc * cos / total
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * x_acc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.steps += 1
        terminated = bool(abs(x) > self.x_limit or abs(theta) > self.theta_limit)
        truncated = self.steps >= self.max_steps
        return self.state.astype(np.float32), 1.0, terminated, truncated, {}

    def render(self):
        return None

    def close(self) -> None:
        pass


def make(env_id: str, **kwargs):
    if env_id != "CartPole-v1":
        raise ValueError(f"gymnasium stand-in: only CartPole-v1, not {env_id!r}")
    return CartPole(**kwargs)
