"""The network in PyTorch: the Rust pipeline's policy/value network as an
``nn.Module``, loaded from a checkpoint and saved as one that the pipeline
loads and plays (install PyTorch and ``safetensors``).

>>> import gipf, gipf.torch
>>> net = gipf.torch.load("models/reference.safetensors")
>>> logits, value = net(torch.from_numpy(gipf.Game().encode()[None]))

A checkpoint is a weights file (``.safetensors``) and its description beside
it (``.json``: the network's shape, the encoding version, the variant); see
src/checkpoint.rs for the format.
"""

import json
import os
import tempfile
from typing import Any, Dict, Optional, Tuple

import safetensors.torch
import torch
from torch import nn

from gipf._core import ENCODING_VERSION, GRID, NUM_ACTIONS, NUM_PLANES, check_network

#: The auxiliary outputs of a network with ``aux_targets``.
AUX_OUTPUTS = 3
#: The description format this module writes.
CHECKPOINT_FORMAT = 4
#: The batch norms' epsilon, LibTorch's default as the Rust network uses it.
BATCH_NORM_EPS = 1e-5
CELLS = GRID * GRID


def _conv(c_in: int, c_out: int, k: int) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False)


def _bn(c: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, eps=BATCH_NORM_EPS)


class ResBlock(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv1, self.bn1, self.conv2, self.bn2 = _conv(c, c, 3), _bn(c), _conv(c, c, 3), _bn(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + x)


class PolicyValueNet(nn.Module):
    """The residual tower, the policy head over the action indices and the
    value head, layer for layer as src/net/mod.rs builds them (the same
    parameter names, so that state dicts and weights files match)."""

    def __init__(self, blocks: int, channels: int, value_hidden: int, value_pooling: bool = False,
                 aux_targets: bool = False):
        super().__init__()
        c = channels
        self.network = {"blocks": blocks, "channels": channels, "value_hidden": value_hidden}
        if value_pooling:
            self.network["value_pooling"] = True
        if aux_targets:
            self.network["aux_targets"] = True
        self.stem, self.stem_bn = _conv(NUM_PLANES, c, 3), _bn(c)
        self.blocks = nn.ModuleList(ResBlock(c) for _ in range(blocks))
        self.policy_conv, self.policy_bn = _conv(c, 2, 1), _bn(2)
        self.policy_fc = nn.Linear(2 * CELLS, NUM_ACTIONS)
        self.value_conv, self.value_bn = _conv(c, 1, 1), _bn(1)
        self.value_pooling = value_pooling
        self.value_fc1 = nn.Linear(CELLS + (c if value_pooling else 0), value_hidden)
        self.value_fc2 = nn.Linear(value_hidden, 1)
        self.value_aux = nn.Linear(value_hidden, AUX_OUTPUTS) if aux_targets else None

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """``x``: input planes ``(n, NUM_PLANES, GRID, GRID)``. Returns policy
        logits ``(n, NUM_ACTIONS)`` and values in [-1, 1] for the player to
        act, ``(n,)``."""
        policy, value, _ = self.forward_all(x)
        return policy, value

    def forward_all(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """As ``forward``, with the auxiliary outputs ``(n, AUX_OUTPUTS)``
        when the network has them."""
        x = torch.relu(self.stem_bn(self.stem(x)))
        for block in self.blocks:
            x = block(x)
        policy = self.policy_fc(torch.relu(self.policy_bn(self.policy_conv(x))).flatten(1))
        features = torch.relu(self.value_bn(self.value_conv(x))).flatten(1)
        if self.value_pooling:
            features = torch.cat([features, x.mean(dim=(2, 3))], dim=1)
        hidden = torch.relu(self.value_fc1(features))
        value = torch.tanh(self.value_fc2(hidden)).squeeze(1)
        aux = torch.tanh(self.value_aux(hidden)) if self.value_aux is not None else None
        return policy, value, aux

    def weights(self) -> Dict[str, torch.Tensor]:
        """The tensors of a weights file: float32, contiguous, on the CPU,
        without PyTorch's batch counters (the Rust network has none)."""
        return {
            name: tensor.detach().to("cpu", torch.float32).contiguous()
            for name, tensor in self.state_dict().items()
            if not name.endswith("num_batches_tracked")
        }


def _description_path(weights: str) -> str:
    root, ext = os.path.splitext(weights)
    if ext != ".safetensors":
        raise ValueError(f"{weights}: a checkpoint's weights are a .safetensors file")
    return root + ".json"


def load(checkpoint: str) -> PolicyValueNet:
    """The network of a checkpoint (its ``.safetensors``; the ``.json``
    beside it gives the shape), in eval mode, with its description as
    ``.description``. ValueError for a damaged or foreign checkpoint."""
    path = _description_path(os.fspath(checkpoint))
    try:
        with open(path) as f:
            description = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read the checkpoint's description: {e}") from e
    if not isinstance(description, dict) or not isinstance(description.get("network"), dict):
        raise ValueError(f"{path}: not a checkpoint description (no network shape)")
    if description.get("encoding_version") != ENCODING_VERSION:
        raise ValueError(f"{path}: encoding version {description.get('encoding_version')}, "
                         f"this package reads {ENCODING_VERSION}")
    shape = description["network"]
    try:
        # The Rust programs' bounds, before a network of that shape is built.
        check_network(json.dumps(shape))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from e
    try:
        net = PolicyValueNet(int(shape["blocks"]), int(shape["channels"]), int(shape["value_hidden"]),
                             bool(shape.get("value_pooling", False)), bool(shape.get("aux_targets", False)))
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(f"{path}: a network shape {shape} that cannot be built: {e}") from e
    try:
        tensors = safetensors.torch.load_file(os.fspath(checkpoint))
    except Exception as e:  # safetensors raises its own error types for damaged files
        raise ValueError(f"{checkpoint}: cannot read the weights: {e}") from e
    expected = net.weights()
    if set(tensors) != set(expected):
        missing, unknown = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
        raise ValueError(f"{checkpoint}: weights do not fit the network {shape}: "
                         f"missing {missing[:5]}, unknown {unknown[:5]}")
    for name, tensor in tensors.items():
        if tensor.shape != expected[name].shape or not torch.isfinite(tensor).all():
            raise ValueError(f"{checkpoint}: {name} has shape {tuple(tensor.shape)} "
                             f"(expected {tuple(expected[name].shape)}) or values that are not finite")
    net.load_state_dict({name: t.float() for name, t in tensors.items()}, strict=False)
    net.description = description
    return net.eval()


def _write(path: str, write) -> None:
    """Writes a file under a temporary name beside it, then renames it in."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    os.close(fd)
    try:
        write(temporary)
        with open(temporary, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def save(net: PolicyValueNet, checkpoint: str, step: Optional[int] = None, variant: Optional[str] = None,
         config: Optional[Dict[str, Any]] = None) -> None:
    """Writes ``net`` as a checkpoint the Rust pipeline loads and plays
    (``gipf play --model``, ``gipf loop --from``): ``checkpoint`` (a
    ``.safetensors`` path) and its ``.json`` description. ``step``,
    ``variant`` and ``config`` default to those of the checkpoint ``net``
    was loaded from (else 0, standard and none)."""
    path = _description_path(os.fspath(checkpoint))
    loaded = getattr(net, "description", {})
    description = {
        "format": CHECKPOINT_FORMAT,
        "step": int(step if step is not None else loaded.get("step", 0)),
        "samples_seen": 0,
        "encoding_version": ENCODING_VERSION,
        "network": net.network,
        "variant": variant or loaded.get("variant", "standard"),
        "config": config if config is not None else loaded.get("config", {}),
    }
    weights = net.weights()
    if not all(torch.isfinite(t).all() for t in weights.values()):
        raise ValueError("the network has weights that are not finite")
    _write(os.fspath(checkpoint), lambda p: safetensors.torch.save_file(weights, p))

    def write_description(p: str) -> None:
        with open(p, "w") as f:
            json.dump(description, f, indent=2)

    _write(path, write_description)
