"""What magnitude_pruning's checks run: small models whose Conv2d and Linear layers have different
weight scales, a training loop that records the weight every forward pass actually used, and the
torch.nn.utils.prune twin a learner's pruned model is compared with."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch import nn
from torch.overrides import TorchFunctionMode

from quizapp.checking.harness import fail

PRUNABLE = (nn.Linear, nn.Conv2d)


class Net(nn.Module):
    """Two convs and two linears whose default init scales differ (bound 1/sqrt(fan_in): 0.33, 0.15,
    0.125, 0.2), 1881 weights in all, and a BatchNorm and a LayerNorm that are not to be pruned."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 5, 3, padding=1), nn.BatchNorm2d(5), nn.ReLU(),
                                      nn.Conv2d(5, 4, 3, padding=1), nn.ReLU())
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64, 24), nn.LayerNorm(24), nn.Tanh(), nn.Linear(24, 5))

    def forward(self, x):
        return self.head(self.features(x))


class ChannelNet(nn.Module):
    """A conv and a linear to prune by channels, and an output layer that is never pruned."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.fc = nn.Linear(96, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(torch.tanh(self.fc(torch.relu(self.conv(x)).flatten(1))))


def build(kind, device, *, small_others=False, seed=0) -> nn.Module:
    """A fresh model; `small_others`: biases and norm parameters far below every weight, so that a
    solution that ranks them with the weights prunes them first."""
    torch.manual_seed(seed)
    model = kind().to(device)
    if small_others:
        g = torch.Generator().manual_seed(seed + 7)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if not (name.endswith("weight") and p.dim() > 1):
                    p.copy_(1e-3 * (torch.rand(p.shape, generator=g) + 0.5))
    return model


def data(device, kind=Net, n=16, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1, 4, 4, generator=g)
    y = torch.randn(n, 5 if kind is Net else 3, generator=g)
    return x.to(device), y.to(device)


@contextlib.contextmanager
def one_thread():
    """Run tiny models on one intra-op thread: they gain nothing from more, and on a busy machine the
    threads' hand-offs cost more than the work (8 training steps of Net on a loaded 2-core machine:
    1.3 s with 2 threads, 0.18 s with 1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def layers(model) -> list[tuple[str, nn.Module]]:
    """The Linear and Conv2d layers in forward order (the order of named_modules in these models)."""
    return [(name, m) for name, m in model.named_modules() if isinstance(m, PRUNABLE)]


def make_optimizer(name, params):
    if name == "SGD-momentum":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    return torch.optim.AdamW(params, lr=0.01, weight_decay=0.1)


OPT_TEXT = {"SGD-momentum": "SGD(lr=0.1, momentum=0.9)", "AdamW": "AdamW(lr=0.01, weight_decay=0.1)"}


# -- what a forward pass used ----------------------------------------------------------------

class UsedWeights(TorchFunctionMode):
    """Records the weight each F.linear / F.conv2d call receives: what the forward pass really used,
    whatever the solution's masks, hooks or parametrizations did before."""

    def __init__(self, live=False):
        super().__init__()
        self.weights: list[torch.Tensor] = []
        self.live = live  # keep the tensors themselves, their gradients retained, instead of copies

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") in ("linear", "conv2d"):
            weight = args[1] if len(args) > 1 else kwargs.get("weight")
            if isinstance(weight, torch.Tensor):
                if self.live and weight.requires_grad and weight.grad_fn is not None:
                    weight.retain_grad()
                self.weights.append(weight if self.live else weight.detach().clone())
        return func(*args, **kwargs)


@dataclass
class Seen:
    """One forward pass: per layer, the weight it used and `module.weight` read right after it."""

    used: list
    read: list
    output: torch.Tensor


def forward(model, x, grad=False):
    mods = [m for _, m in layers(model)]
    with torch.set_grad_enabled(grad), UsedWeights() as mode:
        out = model(x)
    if len(mode.weights) != len(mods):
        fail(f"one forward pass of the model made {len(mode.weights)} linear/conv2d calls, "
                                 f"expected {len(mods)} (one per layer); keep nn.Linear and nn.Conv2d's own forward")
    read = [getattr(m, "weight").detach().clone() for m in mods]
    return out, Seen(mode.weights, read, out.detach().clone())


def train(model, optimizer, steps, x, y) -> list[Seen]:
    """`steps` optimizer steps on an MSE loss; returns the forward passes (one per step, then one
    more after the last step), each with the weights it used."""
    seen = []
    for _ in range(steps):
        out, s = forward(model, x, grad=True)
        seen.append(s)
        loss = F.mse_loss(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return seen


def sparsity(weights) -> list[float]:
    """Per layer, the fraction of the weight that is exactly 0."""
    return [(w == 0).float().mean().item() for w in weights]


def share(masks) -> list[float]:
    """Per layer, the fraction of a bool mask that is True (e.g. of the weights to prune)."""
    return [m.float().mean().item() for m in masks]


def zeros_of(weights) -> torch.Tensor:
    """One flat bool tensor over all layers: where the weights are exactly 0."""
    return torch.cat([(w == 0).flatten() for w in weights])


def smallest(weights, k) -> torch.Tensor:
    """One flat bool tensor over all layers: the k entries of smallest |w|, all layers ranked together."""
    flat = torch.cat([w.abs().flatten() for w in weights])
    mask = torch.zeros_like(flat, dtype=torch.bool)
    mask[torch.topk(flat, k, largest=False).indices] = True
    return mask


def split(flat, like) -> list:
    out, start = [], 0
    for w in like:
        out.append(flat[start:start + w.numel()].view_as(w))
        start += w.numel()
    return out


# -- torch.nn.utils.prune, the twin ----------------------------------------------------------

def mirror(model, originals: dict, pruned_values: dict) -> None:
    """Prune `model` (built like the learner's) where the learner's model went to zero, with
    torch.nn.utils.prune masks: then both train from the same pruned state."""
    for name, m in model.named_modules():
        for attr in ("weight", "bias"):
            key = f"{name}.{attr}"
            if key in pruned_values and key in originals:
                gone = (pruned_values[key] == 0) & (originals[key] != 0)
                if bool(gone.any()):
                    prune.custom_from_mask(m, attr, (~gone).to(originals[key].dtype))


def values(model) -> dict[str, torch.Tensor]:
    """Every weight and bias of the model, as the modules show them (`module.weight`)."""
    out = {}
    for name, m in model.named_modules():
        for attr in ("weight", "bias"):
            value = getattr(m, attr, None)
            if isinstance(value, torch.Tensor):
                out[f"{name}.{attr}"] = value.detach().clone()
    return out


def smallest_norm_rows(weight, k: int, p: float) -> list[int]:
    norms = weight.detach().flatten(1).norm(p=p, dim=1)
    return sorted(torch.topk(norms, k, largest=False).indices.tolist())


# -- channels whose L1 and L2 rankings disagree ----------------------------------------------

def crafted(layer: nn.Module, seed: int) -> nn.Module:
    """Half the output channels spiky (one large entry), half flat (every entry medium): by L2 the
    flat ones are smallest, by L1 the spiky ones, so the two rankings pick disjoint channels."""
    g = torch.Generator().manual_seed(seed)
    out = layer.weight.shape[0]
    fan_in = layer.weight[0].numel()
    rows = []
    for r in range(out):
        jitter = 1 + 0.05 * r
        if r % 2:
            row = torch.full((fan_in,), 0.4 / fan_in ** 0.5) * jitter * (1 + 0.01 * torch.rand(fan_in, generator=g))
        else:
            row = 0.003 * torch.rand(fan_in, generator=g)
            row[r % fan_in] = 0.6 * jitter
        signs = torch.where(torch.rand(fan_in, generator=g) < 0.5, -1.0, 1.0)
        rows.append(row * signs)
    order = torch.randperm(out, generator=g)
    with torch.no_grad():
        layer.weight.copy_(torch.stack(rows)[order].view_as(layer.weight))
    return layer


@dataclass
class ChannelCase:
    label: str
    layer: nn.Module
    amount: float
    x: torch.Tensor = field(repr=False, default=None)


def channel_cases(device) -> list[ChannelCase]:
    torch.manual_seed(3)
    linear = crafted(nn.Linear(6, 8), 11).to(device)
    conv = crafted(nn.Conv2d(3, 6, 3, padding=1), 12).to(device)
    linear2 = crafted(nn.Linear(6, 8), 13).to(device)
    g = torch.Generator().manual_seed(4)
    return [
        ChannelCase("nn.Linear(6, 8), amount=0.5", linear, 0.5, torch.randn(5, 6, generator=g).to(device)),
        ChannelCase("nn.Conv2d(3, 6, 3), amount=0.3", conv, 0.3, torch.randn(2, 3, 5, 5, generator=g).to(device)),
        ChannelCase("nn.Linear(6, 8), amount=0.25", linear2, 0.25, torch.randn(5, 6, generator=g).to(device)),
    ]


def layer_forward(layer, x):
    with torch.no_grad(), UsedWeights() as mode:
        layer(x)
    if len(mode.weights) != 1:
        fail(f"one forward pass of the layer made {len(mode.weights)} linear/conv2d calls, "
                                 "expected 1; keep nn.Linear and nn.Conv2d's own forward")
    return mode.weights[0]
