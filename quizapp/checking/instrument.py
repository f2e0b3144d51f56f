"""Child side: watch what a solution does to torch. Installed before the solution is imported.

Every observation goes to LOG as (kind, details) in the order it happened, so checks can ask
"was the loss scaled before backward?" or "did clipping see unscaled gradients?".
"""

from __future__ import annotations

import contextlib
import math
import types
from dataclasses import dataclass, field

import torch


@dataclass
class Event:
    kind: str
    info: dict = field(default_factory=dict)


class EventLog:
    def __init__(self):
        self.events: list[Event] = []
        self.scalers: list = []
        self.device_type = "cpu"
        self._in_scaler_step = 0
        self.watched_params: list[torch.Tensor] = []

    def reset(self, device_type: str = "cpu") -> None:
        self.__init__()
        self.device_type = device_type

    def add(self, kind: str, **info) -> None:
        self.events.append(Event(kind, info))

    def of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]



LOG = EventLog()


def split_iterations(events: list[Event]) -> list[list[Event]]:
    """Events split at each backward: iteration i holds backward i and what follows it."""
    out: list[list[Event]] = []
    for event in events:
        if event.kind == "backward":
            out.append([])
        if out:
            out[-1].append(event)
    return out


def autocast_on() -> bool:
    return torch.is_autocast_enabled(LOG.device_type)


def grads_all_zero(params) -> bool:
    return all(p.grad is None or not bool(p.grad.any()) for p in params)


# -- GradScaler ------------------------------------------------------------------------------

class _Recording:
    """Mixed into GradScaler classes: record each call, then do what the real scaler does."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        LOG.scalers.append(self)
        LOG.add("scaler.init", enabled=self.is_enabled(), device=getattr(self, "_device", None),
                cls=type(self).__qualname__)

    def scale(self, outputs):
        scaled = super().scale(outputs)
        if isinstance(scaled, torch.Tensor):
            LOG.add("scale", scale=self.get_scale(), tensor_id=id(scaled))
        return scaled

    def unscale_(self, optimizer):
        LOG.add("unscale_", scale=self.get_scale())
        return super().unscale_(optimizer)

    def step(self, optimizer, *args, **kwargs):
        LOG.add("scaler.step", scale=self.get_scale())
        LOG._in_scaler_step += 1
        try:
            return super().step(optimizer, *args, **kwargs)
        finally:
            LOG._in_scaler_step -= 1

    def update(self, new_scale=None):
        before = self.get_scale()
        result = super().update(new_scale)
        LOG.add("update", before=before, after=self.get_scale())
        return result


class RecordingGradScaler(_Recording, torch.amp.GradScaler):
    pass


_real_cuda_scaler = torch.cuda.amp.GradScaler


class RecordingCudaGradScaler(_Recording, _real_cuda_scaler):
    """torch.cuda.amp.GradScaler: deprecated, CUDA-only; recorded as what it is."""


# -- backward, clipping ---------------------------------------------------------------------

_real_backward = torch.autograd.backward
_real_clip = torch.nn.utils.clip_grad_norm_


def _recording_backward(tensors, *args, **kwargs):
    """torch.autograd.backward, which Tensor.backward calls too: one place sees `loss.backward()` and
    `torch.autograd.backward(loss)` alike."""
    first = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
    if isinstance(first, torch.Tensor):
        LOG.add("backward", autocast=autocast_on(), dtype=first.dtype, value=_item(first), tensor_id=id(first),
                grads_zero=grads_all_zero(LOG.watched_params),
                params=[p.detach().clone() for p in LOG.watched_params])
    return _real_backward(tensors, *args, **kwargs)


def _recording_clip(parameters, max_norm, *args, **kwargs):
    parameters = list(parameters) if not isinstance(parameters, torch.Tensor) else [parameters]
    total = _real_clip(parameters, max_norm, *args, **kwargs)
    LOG.add("clip", max_norm=float(max_norm), total_norm=_item(total))
    return total


def _item(t) -> float:
    try:
        return float(t.detach().float().item()) if t.numel() == 1 else math.nan
    except Exception:  # noqa: BLE001 - a tensor the solution made strange; the value is only shown
        return math.nan


def install() -> None:
    """Patch torch so that every way of reaching these APIs reaches the recording versions."""
    torch.amp.GradScaler = RecordingGradScaler
    torch.amp.grad_scaler.GradScaler = RecordingGradScaler
    torch.GradScaler = RecordingGradScaler
    torch.cuda.amp.GradScaler = RecordingCudaGradScaler
    torch.cuda.amp.grad_scaler.GradScaler = RecordingCudaGradScaler
    torch.autograd.backward = _recording_backward
    torch.nn.utils.clip_grad_norm_ = _recording_clip
    torch.nn.utils.clip_grad.clip_grad_norm_ = _recording_clip


# -- per-run helpers ------------------------------------------------------------------------

def run_closure_first(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """`optimizer.step(closure)`: run the closure now and hand the step one that returns its loss.

    Lightning and Composer run the last micro-batch's forward, backward and clipping inside the
    closure, which torch's optimizers call at the start of step(). Running it here, before anything
    records the step, puts what it does before the step in the log and in the gradients a check
    reads, which is what it is. The optimizers the grader builds call their closure once.
    """
    closure = args[0] if args else kwargs.get("closure")
    if not callable(closure) or getattr(closure, "_quizapp_ran", False):
        return args, kwargs
    with torch.enable_grad():
        loss = closure()

    def replay():
        return loss

    replay._quizapp_ran = True
    if args:
        return (replay, *args[1:]), kwargs
    return args, {**kwargs, "closure": replay}


def watch_optimizer(optimizer, before_step=None) -> None:
    """Record step() (and whether it came through scaler.step) and zero_grad() on this instance.

    `before_step()` runs when a step is entered, after its closure (if any) has run: the moment
    the gradients the step will use are final.
    """
    real_step, real_zero = optimizer.step, optimizer.zero_grad

    def step(self, *args, **kwargs):
        args, kwargs = run_closure_first(args, kwargs)
        LOG.add("opt.step", via_scaler=LOG._in_scaler_step > 0)
        if before_step is not None:
            before_step()
        return real_step(*args, **kwargs)

    def zero_grad(self, *args, **kwargs):
        LOG.add("zero_grad")
        return real_zero(*args, **kwargs)

    # Bound methods, as the optimizer's own are: an LR scheduler built afterwards wraps
    # `optimizer.step.__func__`, which a plain function does not have.
    optimizer.step = types.MethodType(step, optimizer)
    optimizer.zero_grad = types.MethodType(zero_grad, optimizer)


def watch_forward(model) -> list:
    """Record autocast state and output dtype of every Linear's forward."""

    def hook(module, inputs, output):
        LOG.add("forward", autocast=autocast_on(),
                autocast_dtype=torch.get_autocast_dtype(LOG.device_type), out_dtype=output.dtype)

    return [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Linear)]


def inject_inf(param: torch.Tensor, at_backward: int) -> None:
    """Make `param`'s gradient inf during backward number `at_backward` (0-based), once."""
    calls = {"n": 0}

    def hook(grad):
        n = calls["n"]
        calls["n"] += 1
        if n == at_backward:
            grad = grad.clone()
            grad.view(-1)[0] = math.inf
        return grad

    param.register_hook(hook)


def reset_torch_state(seed: int = 0) -> None:
    """Undo what a previous check (or a misbehaving solution) left behind."""
    torch.manual_seed(seed)
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    for device_type in ("cpu", "cuda"):
        with contextlib.suppress(Exception):
            torch.set_autocast_enabled(device_type, False)
    torch.clear_autocast_cache()
