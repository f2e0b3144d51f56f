"""Child side: how an exercise's checks.py declares its checks, and the helpers checks share."""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NoReturn

from quizapp.checking.compare import (  # noqa: F401 - re-exported: checks compare through harness's names
    BFLOAT16,
    EXACT,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    Tol,
    close_elements,
    is_close,
    largest_error,
    mismatch,
    scale_of,
    tolerance_for,
)
from quizapp.checking.loading import load_module, type_name
from quizapp.words import plural  # noqa: F401 - part of the face checks are written on ("3 steps", "1 step")


class CheckFailed(Exception):
    """The solution did something other than expected; the message says what, in numbers."""


class CheckSkipped(Exception):
    """The check has no meaning here (e.g. needs CUDA). Only the checks' own code may raise it (see
    `skip`): a skip that went through the solution's code is an error."""


FOREIGN_SKIP = ("the solution raised the grader's CheckSkipped: only the grader's checks may skip, "
                "and a skip from the solution is an error")


class ForeignSkip(Exception):
    """What a CheckSkipped that came out of the solution's code becomes."""


def fail(message: str) -> NoReturn:
    raise CheckFailed(message)


def sibling_module(checks_file: str, name: str):
    """Module `name`.py beside an exercise's checks.py, loaded once by path: exercise folders are
    not packages, and a grade (or a rank forked from it) must share one copy of each module."""
    if not name.isidentifier():
        raise ValueError(f"not a module name: {name!r}")
    folder = Path(checks_file).resolve().parent
    module_name = f"quizapp_exercise_{folder.name}_{name}"
    if module_name not in sys.modules:
        _SIBLINGS.append(load_module(module_name, folder / f"{name}.py"))
    return sys.modules[module_name]


_SIBLINGS: list = []  # the exercise modules loaded by sibling_module: checks' code, like checks.py


def skip(reason: str) -> NoReturn:
    """Skip the running check. Call it from the checks' own code, outside any call into the solution:
    a skip whose traceback passes through code that is not the grader's counts as the solution's."""
    raise CheckSkipped(reason)


NOTHING_TO_CHECK = "nothing to check: "  # how every skip for a subject that never happened begins


def nothing_to_check(reason: str) -> NoReturn:
    """Skip the running check because what it judges never happened (no forward ran, no step was
    taken, the function handed its input back): a check of nothing must not read as a pass, and it
    is no failure of its own either; the checks that compare results fail such a run."""
    skip(NOTHING_TO_CHECK + reason)


def happened(records, what: str) -> list:
    """`records`, what a run left of a check's subject (forward passes, backward calls, optimizer
    steps, iterations), as a list; when there is none, skip the check saying `what` never ran."""
    records = list(records)
    if not records:
        nothing_to_check(f"{what} never ran")
    return records


def _code_objects(obj, into: set, seen: set) -> None:
    """Every code object defined by a module, class or function, nested ones (closures, lambdas,
    comprehensions) included."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, types.CodeType):
        into.add(obj)
        for const in obj.co_consts:
            if isinstance(const, types.CodeType):
                _code_objects(const, into, seen)
    elif isinstance(obj, (staticmethod, classmethod)):
        _code_objects(obj.__func__, into, seen)
    elif isinstance(obj, property):
        for fn in (obj.fget, obj.fset, obj.fdel):
            if fn is not None:
                _code_objects(fn, into, seen)
    elif isinstance(obj, types.FunctionType):
        _code_objects(obj.__code__, into, seen)
    elif isinstance(obj, (type, types.ModuleType)):
        for value in list(vars(obj).values()):
            if isinstance(value, (types.FunctionType, staticmethod, classmethod, property)) or (
                    isinstance(value, type) and value.__module__ == getattr(obj, "__name__", None)):
                _code_objects(value, into, seen)


def skip_is_the_checks(exc: BaseException, checks_module) -> bool:
    """Whether every frame a CheckSkipped passed through runs the grader's code: the checks module,
    the exercise's modules beside it, or the checking package's own modules (those loaded: read from
    sys.modules, so that this module imports none of them); the solution's code, or code compiled
    under one of those files' names, is not."""
    ours: set = set()
    seen: set = set()
    # A cold child runs `python -m quizapp.checking.entry`: that module is __main__, known by its spec.
    package = [m for name, m in list(sys.modules.items()) if m is not None and (name.startswith("quizapp.checking.") or (
        getattr(getattr(m, "__spec__", None), "name", None) or "").startswith("quizapp.checking."))]
    for module in (*package, checks_module, *_SIBLINGS):
        _code_objects(module, ours, seen)
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code not in ours:
            return False
        tb = tb.tb_next
    return True


@dataclass
class Check:
    id: str
    title: str
    run: Callable


@dataclass
class Required:
    """A name the solution must define, with the call the grader will make (to test the signature)."""

    name: str
    signature: str  # as shown to the learner
    sample_args: tuple = ()
    sample_kwargs: dict = field(default_factory=dict)
    is_class: bool = False


class Checks:
    """An exercise's ordered list of checks: `CHECKS = Checks(); @CHECKS.add("id", "title")`."""

    def __init__(self, *required: Required):
        self.required = required
        self.checks: list[Check] = []

    def add(self, check_id: str, title: str):
        def register(fn):
            self.checks.append(Check(check_id, title, fn))
            return fn

        return register


class SolutionView:
    """The learner's module as the checks see it: what its functions return comes back plain (see
    `plain`), and a CheckSkipped out of them is the solution's, never a skip. Its classes are its own
    (checks ask isinstance of them), but the methods each defines return plain values too: see
    `plain_methods`, applied here once, the one place values cross from the learner's objects."""

    def __init__(self, module):
        object.__setattr__(self, "_module", module)
        plain_methods(module)

    def __getattr__(self, name):
        value = getattr(object.__getattribute__(self, "_module"), name)
        if inspect.isclass(value) or not callable(value):
            return value

        def call(*args, **kwargs):
            try:
                result = value(*args, **kwargs)
            except CheckSkipped as exc:  # its traceback kept: the report shows the learner's lines
                raise ForeignSkip(FOREIGN_SKIP).with_traceback(exc.__traceback__) from None
            return plain(result)

        call.__name__ = call.__qualname__ = name
        return call

    def __setattr__(self, name, value):
        setattr(object.__getattribute__(self, "_module"), name, value)

    def __repr__(self) -> str:
        return f"<the solution {object.__getattribute__(self, '_module')!r}>"


def plain_methods(module) -> None:
    """Make every method of every class the module defines return plain values (a forward's output, a
    scaler's scaled loss, an early stopper's answer): the wrapped method returns its result itself
    when nothing in it needs converting, so honest code keeps the objects it returns."""
    name = getattr(module, "__name__", None)
    for value in list(vars(module).values()):
        if not inspect.isclass(value) or real_dict(value).get("__module__") != name:
            continue
        for attr, member in list(real_dict(value).items()):
            if not isinstance(member, types.FunctionType) or getattr(member, "_quizapp_plain", False):
                continue
            if attr.startswith("__") and attr != "__call__":
                continue  # __init__, __repr__, comparisons: not results a check reads
            type.__setattr__(value, attr, _returns_plain(member))


def _returns_plain(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        result = method(*args, **kwargs)
        return plain(result) if needs_plain(result) else result

    wrapper._quizapp_plain = True
    return wrapper


def needs_plain(value, depth: int = 0) -> bool:
    """Whether `plain` would change `value`: a subclass of a tensor, number, string or container,
    or a container holding one (looked into a few levels deep)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str, complex):
        return False
    torch = sys.modules.get("torch")
    if torch is not None and (kind is torch.Tensor or kind is torch.nn.Parameter):
        return False
    if kind in (list, tuple):
        return depth < 3 and any(needs_plain(v, depth + 1) for v in value)
    if kind is dict:
        return depth < 3 and any(needs_plain(k, depth + 1) or needs_plain(v, depth + 1) for k, v in value.items())
    mro = real_mro(kind)
    return (torch is not None and torch.Tensor in mro) or any(base in mro for base, _ in _PLAIN_BASES)


class Context:
    """What a check sees: the solution, the reference, the device, and a cache for shared runs."""

    def __init__(self, solution, reference, device, exercise_dir):
        self.solution = solution if isinstance(solution, SolutionView) else SolutionView(solution)
        self.reference = reference
        self.device = device
        self.exercise_dir = exercise_dir
        self.data: dict = {}  # extra results for the report (e.g. curves to plot)
        self._cache: dict = {}

    def cached(self, key, compute: Callable):
        """Run `compute` once per key; a run that raised re-raises the same error for every check."""
        if key not in self._cache:
            try:
                self._cache[key] = (True, compute())
            except BaseException as exc:  # noqa: BLE001 - re-raised to each check that asks
                self._cache[key] = (False, exc)
        ok, value = self._cache[key]
        if not ok:
            raise value
        return value

    @contextlib.contextmanager
    def given(self, inputs: str):
        """Name the inputs of the code inside, so an error the solution raises there says which
        inputs triggered it (read back by `error_inputs`); outer `given`s come first."""
        try:
            yield
        except (CheckFailed, CheckSkipped):
            raise
        except BaseException as exc:
            _GIVEN[id(exc)] = (exc, [inputs, *_given_to(exc)])
            raise


# The inputs each error was raised with, kept here, never on the exception: an attribute of the
# exception's would be the solution's to set, and the "with INPUTS:" prefix then its to write. Keyed
# by id, with the exception itself held so that the id cannot be reused while the grade runs.
_GIVEN: dict[int, tuple[BaseException, list[str]]] = {}


def _given_to(exc: BaseException) -> list[str]:
    entry = _GIVEN.get(id(exc))
    return entry[1] if entry is not None and entry[0] is exc else []


def error_inputs(exc: BaseException) -> str:
    """'with INPUTS: ' for an error raised inside `Context.given`, else ''."""
    inputs = [i for i in _given_to(exc) if i]
    return f"with {'; '.join(dict.fromkeys(inputs))}: " if inputs else ""


def signature_problem(obj, req: Required) -> str | None:
    """Why the solution's `name` cannot be called as the grader will call it, or None."""
    if obj is None:
        return f"the solution does not define `{req.name}`; expected {req.name}{req.signature}"
    if req.is_class:
        if not inspect.isclass(obj):
            return f"`{req.name}` must be a class; expected class {req.name}: __init__{req.signature}"
        target = obj.__init__
        args = (None,) + req.sample_args
    else:
        # A class is callable too, but what its __new__ returns never passes through the view that
        # makes a function's results plain: where a function is asked for, a class is refused.
        if inspect.isclass(obj) or not callable(obj):
            what = "a class" if inspect.isclass(obj) else f"a {type_name(obj)}"
            return f"`{req.name}` must be a function, not {what}; expected def {req.name}{req.signature}"
        target, args = obj, req.sample_args
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(*args, **req.sample_kwargs)
    except TypeError as exc:
        return f"`{req.name}` has the wrong signature ({exc}): yours is {req.name}{sig}, expected {req.name}{req.signature}"
    return None


# -- what a solution returns -----------------------------------------------------------------

def plain(value):
    """`value` as plain tensors and Python numbers: a subclass of torch.Tensor becomes a torch.Tensor
    (same data, same graph), a subclass of float, int, str, list, tuple or dict its base type, so
    nothing the solution returns can answer a comparison its own way. A tensor that dispatches its
    own operations has no plain data to read: CheckFailed. Other objects come back as they are."""
    kind = type(value)  # never value.__class__, which an object may fake
    if value is None or kind in (bool, int, float, str, complex):
        return value
    mro = real_mro(kind)
    torch = sys.modules.get("torch")
    if torch is not None and torch.Tensor in mro:
        return _plain_tensor(value, torch)
    for base, convert in _PLAIN_BASES:
        if base in mro:
            return convert(value)
    return value


_PLAIN_BASES = (  # each converts through the base type's own method, never one the subclass overrides
    (int, int.__int__),
    (float, float.__float__),
    (complex, complex.__complex__),
    (str, str.__str__),
    (list, lambda v: [plain(x) for x in list.__iter__(v)]),
    (tuple, lambda v: tuple(plain(x) for x in tuple.__iter__(v))),
    (dict, lambda v: {plain(k): plain(x) for k, x in dict.items(v)}),
)


def real_mro(kind: type) -> tuple:
    """`kind`'s method resolution order as the interpreter uses it, read past a metaclass that
    answers `__mro__` (or `__dict__`) its own way."""
    return _TYPE_MRO.__get__(kind)


def real_dict(kind: type):
    return _TYPE_DICT.__get__(kind)


_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_DICT = type.__dict__["__dict__"]


def _plain_tensor(value, torch):
    kind = type(value)
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        return value
    own_dispatch = next((c for c in real_mro(kind)
                         if c is not torch.Tensor and "__torch_dispatch__" in real_dict(c)), None)
    if own_dispatch is not None:
        fail(f"the solution returned a {kind.__name__}, a torch.Tensor subclass that runs its own operations "
             "(__torch_dispatch__); return a plain torch.Tensor")
    with torch._C.DisableTorchFunctionSubclass():
        return torch.Tensor.as_subclass(value, torch.Tensor)


# -- saying why --------------------------------------------------------------------------------

def consequence(title: str) -> str:
    """Points a failure at the check whose failure it follows from."""
    return f"this follows from the check \"{title}\""


@contextlib.contextmanager
def cause_if(condition: bool, cause: str):
    """Add an upstream cause to a failure raised inside, when there is one."""
    try:
        yield
    except CheckFailed as exc:
        if condition:
            raise CheckFailed(f"{exc}; {cause}") from None
        raise


# A test of the device in a learner's source: `device.type == "cuda"`, `!= "cpu"`,
# torch.cuda.is_available(), `"cuda" in str(device)`, `.startswith("cuda")`.
_DEVICE_TEST = re.compile(r"""[!=]=\s*["'](cuda|cpu)(:\d+)?["']|["'](cuda|cpu)["']\s*(==|!=|in\b|not\s+in\b)"""
                          r"""|cuda\.is_available\s*\(|startswith\(\s*["']cuda""")


def branches_on_device(solution) -> bool:
    """Whether the solution's source tests for CUDA (and so may turn features off on the CPU)."""
    try:
        source = Path(solution.__file__).read_text(encoding="utf-8")
    except (OSError, AttributeError, TypeError, ValueError):
        return False
    return bool(_DEVICE_TEST.search(source))


# -- numbers ---------------------------------------------------------------------------------

def rel_diff(a: float, b: float) -> float:
    a, b = plain(a), plain(b)
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b), 1e-30)


def close(a: float, b: float, rtol: float, atol: float = 0.0) -> bool:
    """Whether two numbers are close by compare.py's rule, |a - b| <= atol + rtol * |b|; for these
    numbers (learning rates, loss scales, losses) an infinity is never right, even an expected one."""
    a, b = plain(a), plain(b)
    return math.isfinite(a) and math.isfinite(b) and is_close(a, b, Tol(rtol, atol))


def listed(names, n: int = 4) -> str:
    """The first n names, and how many more there are: a cut list says it was cut."""
    names = list(names)
    if not names:
        return "none"
    return ", ".join(str(x) for x in names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def as_scalar(value, where: str, what: str = "a scalar loss") -> float:
    """A loss a solution returned, as a float: a one-element tensor or a Python number; anything else
    fails the check, saying what came back."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            fail(f"{where}: expected {what}, got a tensor of shape {tuple(value.shape)}")
        return value.detach().double().item()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    fail(f"{where}: expected {what} as a 0-dim tensor, got {type(value).__name__}")


def fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    return str(x)


def expect_sequence_close(what: str, expected, seen, rtol: float, atol: float = 0.0) -> None:
    """Fail at the first element that differs, with both values and the tolerance."""
    if len(seen) != len(expected):
        fail(f"{what}: expected {len(expected)} values, got {len(seen)}")
    for i, (e, s) in enumerate(zip(expected, seen)):
        if not close(s, e, rtol, atol):
            fail(f"{what}[{i}]: expected {fmt(e)}, got {fmt(s)} (relative difference {rel_diff(e, s):.2e}, "
                 f"tolerance {'0: they must be equal' if not rtol and not atol else f'{rtol:.0e}'})")


def max_param_diff(model_a, model_b) -> tuple[float, str]:
    """The largest difference between two models' parameters, each as a fraction of model_b's
    tensor's largest entry (see `largest_error`: NaN, inf or another shape is infinite), and where."""
    worst, where = 0.0, ""
    for (name, a), (_, b) in zip(model_a.named_parameters(), model_b.named_parameters()):
        diff = largest_error(a, b)
        if diff > worst:
            worst, where = diff, name
    return worst, where


# -- comparing with what was expected: compare.py's rule, failing the check ------------------

def check_close(actual, expected, tol: Tol | None = None, *, where: str = "", why: str = "", **how) -> None:
    """Fail the running check unless `actual` is close to `expected` within `tol` (by default the
    named tolerance of the expected's dtype). The message is `where` (the inputs), what differs (see
    `mismatch`, which takes `how`: what, against, yours, equal_nan, exact_dtype), then `why` (what
    such a difference usually means)."""
    problem = mismatch(plain(actual), plain(expected), tol, **how)
    if problem is not None:
        fail((f"{where}: " if where else "") + problem + (f"; {why}" if why else ""))


def same_outputs(learner_fn: Callable, reference_fn: Callable, *inputs, tol: Tol | None = None, ctx=None,
                 where: str = "", why: str = "", what: str = "outputs", against: str = "the reference", **how):
    """Run the reference's function and the learner's on copies of the same inputs (neither sees what
    the other wrote into them) and fail unless the outputs are close (see `check_close`); return
    (yours, the reference's). An error the learner's function raises goes on up, as any error of the
    solution's does, and with `ctx` it names `where` as the inputs that raised it."""
    expected = reference_fn(*_copies(inputs))
    with ctx.given(where) if ctx is not None else contextlib.nullcontext():
        actual = plain(learner_fn(*_copies(inputs)))
    check_close(actual, expected, tol, where=where, why=why, what=what, against=against, **how)
    return actual, expected


def _copies(inputs: tuple) -> list:
    """Each tensor among `inputs` cloned, a leaf that required grad still requiring it; the rest as is."""
    import torch

    out = []
    for value in inputs:
        if isinstance(value, torch.Tensor):
            copy = value.detach().clone()
            out.append(copy.requires_grad_(True) if value.requires_grad else copy)
        else:
            out.append(value)
    return out
