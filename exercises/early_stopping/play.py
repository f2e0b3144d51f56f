"""The grader as the training loop: a small model with BatchNorm is set to a known state before
every call (call i's weights and running statistics, all different), the stopper gets a scripted
metric, and a Trace records what came back: the return value, `best` and `best_epoch`, and which
call's values each tensor of the model holds afterwards."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from quizapp.checking.harness import fail, fmt, listed, plain
from quizapp.checking.loading import safe_repr


class Missing:
    def __repr__(self) -> str:
        return "missing"


MISSING = Missing()  # an attribute the stopper does not have


@dataclass(frozen=True)
class Scenario:
    metrics: tuple
    patience: int
    min_delta: float = 0.0
    mode: str = "min"

    def kwargs(self, restore_best: bool = True) -> dict:
        return {"patience": self.patience, "min_delta": self.min_delta, "mode": self.mode,
                "restore_best": restore_best}

    def text(self, restore_best: bool = True, defaults: bool = False) -> str:
        made = "EarlyStopping()" if defaults else (
            f"EarlyStopping(patience={self.patience}, min_delta={fmt(self.min_delta)}, mode='{self.mode}'"
            + ("" if restore_best else ", restore_best=False") + ")")
        return f"{made}, metrics [{', '.join(num(m) for m in self.metrics)}]"


def num(x) -> str:
    """A number as fmt writes it, or in full where that would hide a difference (0.4999999)."""
    shown = fmt(x)
    return shown if type(x) is not float or math.isnan(x) or float(shown) == x else repr(x)


def shown(x) -> str:
    """What a solution returned or kept, for a message: numbers as `num` writes them, anything else
    by a repr that can neither raise nor run long."""
    return num(x) if type(x) in (bool, int, float) or x is None or x is MISSING else safe_repr(x, 80)


class Net(nn.Sequential):
    """The model handed to step(). Its load_state_dict notes which call's values it was given, so a
    failed restore can say what it loaded."""

    def load_state_dict(self, state_dict, *args, **kwargs):
        try:
            WATCH.loads.append(held_by(state_dict, WATCH.states))
        except Exception:  # noqa: BLE001 - whatever the solution passes, torch's own call judges it
            WATCH.loads.append({})
        return super().load_state_dict(state_dict, *args, **kwargs)


@dataclass
class Watch:
    states: list = field(default_factory=list)
    loads: list = field(default_factory=list)


WATCH = Watch()


def make_net(device) -> Net:
    torch.manual_seed(0)
    return Net(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2)).to(device)


def call_states(n: int) -> list[dict]:
    """Call i's state: every tensor of the model drawn afresh (running_var positive), and
    num_batches_tracked 10 * (i + 1), so each tensor tells which call's values it holds."""
    template = _TEMPLATE.state_dict()
    states = []
    for i in range(n):
        g = torch.Generator().manual_seed(1000 + i)
        state = {}
        for key, t in template.items():
            if not t.is_floating_point():
                state[key] = torch.full_like(t, 10 * (i + 1))
            elif key.endswith("running_var"):
                state[key] = torch.rand(t.shape, generator=g) * 1.5 + 0.5
            else:
                state[key] = torch.randn(t.shape, generator=g)
        states.append(state)
    return states


_TEMPLATE = Net(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
PARAMS = [name for name, _ in _TEMPLATE.named_parameters()]
BUFFERS = [name for name, _ in _TEMPLATE.named_buffers()]
KEYS = PARAMS + BUFFERS


def held_by(state, states) -> dict:
    """{key: index of the call whose values the tensor holds, or None}."""
    out = {}
    for key, t in dict.items(state) if isinstance(state, dict) else state.items():
        t = plain(t)
        out[key] = None
        if not isinstance(t, torch.Tensor):
            continue
        t = t.detach().cpu()
        for i, s in enumerate(states):
            ref = s.get(key)
            if ref is not None and t.shape == ref.shape and t.dtype == ref.dtype and torch.equal(t, ref):
                out[key] = i
                break
    return out


def set_state(model, state: dict, training: str) -> None:
    """Training between two calls: new tensors assigned ("assign"), or the model's own tensors
    overwritten in place ("inplace"), as optimizer.step() and BatchNorm's forward do."""
    device = next(iter(nn.Module.state_dict(model).values())).device
    if training == "assign":
        nn.Module.load_state_dict(model, {k: v.to(device).clone() for k, v in state.items()}, assign=True)
    else:
        with torch.no_grad():
            for key, t in nn.Module.state_dict(model).items():
                t.copy_(state[key])


def attr(obj, name):
    try:
        value = plain(getattr(obj, name))
    except Exception:  # noqa: BLE001 - a missing or raising attribute reads as missing
        return MISSING
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = plain(value.detach().cpu().item())
    return value


def number(x) -> bool:
    return type(x) in (int, float)


def differs(a, b) -> bool:
    if a is b:
        return False
    if number(a) and number(b):
        return not (a == b or (math.isnan(a) and math.isnan(b)))
    return True


@dataclass
class Trace:
    sc: Scenario
    returns: list = field(default_factory=list)  # what step returned (plain)
    best: list = field(default_factory=list)  # read after each call
    best_epoch: list = field(default_factory=list)
    held: list = field(default_factory=list)  # after each call: {key: call index or None}
    loads: list = field(default_factory=list)  # during each call: what load_state_dict was given
    start: tuple = (MISSING, MISSING)  # best, best_epoch before the first call
    aliases: list = field(default_factory=list)  # the stopper's tensors sharing memory with the model
    stopper: object = None
    model: object = None

    @property
    def stop(self) -> int | None:
        return next((i for i, r in enumerate(self.returns) if stopped(r)), None)

    def moved(self) -> list[tuple]:
        """Per call: (did best change, did best_epoch change): what the attributes show of an improvement."""
        if all(b is MISSING for b in self.best) and all(e is MISSING for e in self.best_epoch):
            fail(f"{self.sc.text()}: after each call your EarlyStopping has neither `best` nor `best_epoch`; the "
                 "grader reads them to see which calls improved: best is the metric of the last improvement, "
                 "best_epoch the index of the call that set it")
        out, prev = [], self.start
        for b, e in zip(self.best, self.best_epoch):
            out.append((differs(b, prev[0]), differs(e, prev[1])))
            prev = (b, e)
        return out


def stopped(r) -> bool:
    """What a training loop's `if stopper.step(...)` makes of a return value (the patience check asks
    for a real bool; the other checks read what they can)."""
    if type(r) in (bool, int, float):
        return bool(r)
    if isinstance(r, torch.Tensor) and r.numel() == 1:
        return bool(r.item())
    try:
        numpy_bool = type(r).__module__ == "numpy" and type(r).__name__ in ("bool", "bool_")
    except Exception:  # noqa: BLE001 - an odd class reads as "go on"
        return False
    return bool(r) if numpy_bool else False


def play(ctx, impl, sc: Scenario, *, training: str = "assign", restore_best: bool = True,
         defaults: bool = False) -> Trace:
    """Call step once per metric until it returns True, as a training loop would."""
    def go():
        states = call_states(len(sc.metrics))
        model = make_net(ctx.device)
        WATCH.states = states
        trace = Trace(sc, model=model)
        with ctx.given(sc.text(restore_best, defaults)):
            trace.stopper = impl.EarlyStopping() if defaults else impl.EarlyStopping(**sc.kwargs(restore_best))
        trace.start = (attr(trace.stopper, "best"), attr(trace.stopper, "best_epoch"))
        for i, metric in enumerate(sc.metrics):
            set_state(model, states[i], training)
            WATCH.loads = []
            with ctx.given(f"{sc.text(restore_best, defaults)}, call {i} (metric {fmt(metric)})"):
                trace.returns.append(plain(trace.stopper.step(metric, model)))
            trace.loads.append(WATCH.loads)
            trace.best.append(attr(trace.stopper, "best"))
            trace.best_epoch.append(attr(trace.stopper, "best_epoch"))
            trace.held.append(held_by(nn.Module.state_dict(model), states))
            if i == 0:
                trace.aliases = shared_memory(trace.stopper, model)
            if stopped(trace.returns[-1]):
                break
        return trace

    name = "solution" if impl is ctx.solution else "reference"
    return ctx.cached((name, sc, training, restore_best, defaults), go)


def shared_memory(stopper, model) -> list[str]:
    """Where the stopper keeps tensors that share memory with the model's live ones."""
    live = {t.untyped_storage().data_ptr() for t in nn.Module.state_dict(model).values()}
    found: list[str] = []

    def walk(obj, path: str, depth: int) -> None:
        if depth > 4 or len(found) >= 6:
            return
        mro = type(obj).__mro__
        if obj is model:
            found.append(f"{path} (the model itself)")
        elif torch.Tensor in mro:
            try:
                if obj.untyped_storage().data_ptr() in live:
                    found.append(path)
            except Exception:  # noqa: BLE001 - a tensor without storage shares nothing
                pass
        elif dict in mro:
            for key, value in list(dict.items(obj))[:64]:
                walk(value, f"{path}[{key!r}]", depth + 1)
        elif list in mro or tuple in mro:
            for i, value in enumerate(list(obj)[:64]):
                walk(value, f"{path}[{i}]", depth + 1)
        elif nn.Module in mro:
            for key, value in nn.Module.state_dict(obj).items():
                walk(value, f"{path}.{key}", depth + 1)

    try:
        fields = dict(vars(stopper))
    except TypeError:
        return []
    for name, value in fields.items():
        try:
            walk(value, f"self.{name}", 0)
        except Exception:  # noqa: BLE001 - only a diagnosis: an odd object is skipped
            continue
    return found


def holds(held: dict, keys) -> str:
    """What the given tensors hold, in words: "call 4's values", or a mix."""
    calls = {held.get(k) for k in keys}
    if calls == {None}:
        return "values of no call (neither the best nor any other)"
    if len(calls) == 1:
        return f"call {calls.pop()}'s values"
    by_call = {}
    for k in keys:
        by_call.setdefault(held.get(k), []).append(k)
    return "; ".join(f"{listed(ks, 3)}: {'no call' if c is None else f'call {c}'}'s values" for c, ks in by_call.items())


def common_call(held: dict, keys) -> int | None:
    calls = {held.get(k) for k in keys}
    return calls.pop() if len(calls) == 1 else None
