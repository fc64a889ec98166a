"""The actor-critic network our PPO trains and imitation warm-starts: separate ReLU MLPs for the
actor (observation -> logits) and the critic (observation, or the perfect-information row, ->
value), and the masked log-softmax both use. Its own module so that ppo.py and imitate.py each
import it without importing each other. The `Network` settings section and the learners' one torch
device check (`check_device`) live here too."""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from domino_envs.errors import ConfigError
from domino_training.settings import HIDDEN, bounded


@dataclass
class Network:
    hidden: list = bounded([256, 256], rule=HIDDEN)  # MLP widths of the actor and the critic
    init_actor: str = ""            # a policy file (.npz) the actor starts from, e.g. a best response's target


DEVICES_ALLOWED = "cpu (or cpu:0), cuda or cuda:N where torch sees that GPU, mps where torch has it, xpu(:N) likewise"


def check_device(key: str, value) -> torch.device:
    """The torch device that the setting `key` names, if it exists on this machine; else ConfigError
    naming the key, the value and what is allowed. The learners' one device check (ppo.device,
    dmc.device), so a run never starts on a device it cannot use and nothing falls back to CPU."""
    def refuse(why: str):
        raise ConfigError(f"{key}={value!r} is not allowed; {why}")

    if not isinstance(value, str):
        refuse(f"a torch device string: {DEVICES_ALLOWED}")
    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        refuse(f"not a torch device string; allowed: {DEVICES_ALLOWED}")
    if device.type == "cpu":
        if device.index not in (None, 0):
            refuse("the CPU is one device: cpu or cpu:0")
    elif device.type in ("cuda", "xpu"):
        backend = getattr(torch, device.type, None)  # torch.cuda, torch.xpu (absent from some builds)
        if backend is None or not backend.is_available():
            refuse(f"torch sees no {device.type.upper()} device; use {key}=cpu")
        count = backend.device_count()
        if device.index is not None and device.index >= count:
            refuse(f"torch sees {count} {device.type.upper()} device(s), {device.type}:0 to {device.type}:{count - 1}")
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            refuse(f"torch has no MPS device here (Apple silicon with an MPS build of torch); use {key}=cpu")
        if device.index not in (None, 0):
            refuse("MPS is one device: mps or mps:0")
    else:
        refuse(f"the learners run on {DEVICES_ALLOWED}; {device.type!r} is not one of them")
    return device


def _mlp(sizes: list[int], last_std: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        last = i == len(sizes) - 2
        nn.init.orthogonal_(lin.weight, last_std if last else math.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if not last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate ReLU MLPs: the actor maps an observation to logits, the critic its input to a value."""

    def __init__(self, obs_size: int, num_actions: int, hidden: list[int], critic_size: int | None = None):
        super().__init__()
        self.hidden = [int(h) for h in hidden]
        self.actor = _mlp([obs_size, *self.hidden, num_actions], 0.01)
        self.critic = _mlp([critic_size or obs_size, *self.hidden, 1], 1.0)

    def value(self, critic_in: torch.Tensor) -> torch.Tensor:
        return self.critic(critic_in).squeeze(-1)

    def load_actor_layers(self, layers: list[tuple[np.ndarray, np.ndarray]], where: str) -> None:
        """Start the actor from a policy file's layers (agents/trained.py); ConfigError unless their
        shapes are this actor's."""
        from domino_envs.errors import ConfigError

        mine = [m for m in self.actor if isinstance(m, nn.Linear)]
        want = [tuple(m.weight.shape) for m in mine]
        got = [tuple(w.shape) for w, _ in layers]
        if got != want:
            raise ConfigError(f"network.init_actor={where!r} has layers {got}; this network's actor has {want} "
                              f"(set network.hidden to the file's widths)")
        with torch.no_grad():
            for m, (w, b) in zip(mine, layers):
                m.weight.copy_(torch.from_numpy(np.asarray(w, np.float32)))
                m.bias.copy_(torch.from_numpy(np.asarray(b, np.float32)))

    def actor_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The actor as numpy (W, b) pairs, the agents' format."""
        return [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
                for m in self.actor if isinstance(m, nn.Linear)]


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log-softmax over the legal actions; illegal ones get -inf (probability exactly 0)."""
    return torch.log_softmax(logits.masked_fill(~mask, -math.inf), dim=-1)


@contextlib.contextmanager
def torch_threads(n: int):
    """torch's intra-op threads are `n` inside the block, what they were after it. The learners give
    their large-batch steps (the PPO update, a distillation fit) ppo.torch_threads and leave the rest
    on 1: on an idle 2-core machine a second thread made the update faster but collection's
    batch-of-256 forward passes about 4x slower (docs/speed.md)."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
