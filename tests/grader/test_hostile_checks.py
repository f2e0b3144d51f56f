"""Issue 23: only the checks may skip, a grade in which no check passed is never a pass, and what a
solution returns is turned into plain tensors and numbers before any comparison."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import exercise_record, grade_many
from warmutil import grade_warm_many

from quizapp.grading.result import CheckResult, overall_status

HOSTILE = Path(__file__).parent / "hostile"
SKIPPERS = ["skip_imported", "skip_sys_modules", "skip_fake_filename", "skip_from_method"]
CHECK_COUNT = {"skip_from_method": 7}
LIARS = ["lying_isclose", "lying_item", "mro_liar", "class_for_function"]


@pytest.fixture(scope="module", params=["cold", "warm"])
def graded(request):
    names = SKIPPERS + LIARS
    results = (grade_many if request.param == "cold" else grade_warm_many)([(str(HOSTILE / f"{n}.py"),) for n in names])
    return dict(zip(names, results))


@pytest.mark.parametrize("name", SKIPPERS)
def test_a_skip_raised_by_the_solution_is_an_error(graded, name):
    result = graded[name]
    assert result.code == 1 and result.report["status"] == "fail", result.report
    checks = result.report["checks"]
    assert len(checks) == CHECK_COUNT.get(name, 14) and {c["status"] for c in checks} == {"error"}, checks
    assert "CheckSkipped" in checks[0]["message"] and "only the grader's checks" in checks[0]["message"]


def test_no_check_passed_is_never_a_pass():
    skipped = [CheckResult(str(i), str(i), "skip", "needs CUDA") for i in range(3)]
    assert overall_status(skipped) == "fail"
    assert overall_status([]) == "fail"
    assert overall_status(skipped + [CheckResult("p", "p", "pass")]) == "pass"


def test_a_tensor_that_answers_every_comparison_with_true_fails(graded):
    result = graded["lying_isclose"]
    assert result.code == 1 and result.report["status"] == "fail"
    assert result.status("per-tensor-matches-torch") == "fail"
    assert result.status("per-channel-matches-torch") == "fail"


def test_a_tensor_whose_item_equals_anything_fails(graded):
    result = graded["lying_item"]
    assert result.code == 1
    assert result.status("value-matches-torch") == "fail", result.check("value-matches-torch")


def test_a_tensor_whose_metaclass_hides_its_bases_is_made_plain(graded):
    """Its metaclass answers __mro__ without torch.Tensor: read past it, the value is the zero it holds."""
    result = graded["mro_liar"]
    assert result.code == 1 and result.report["status"] == "fail"
    assert result.status("per-tensor-matches-torch") == "fail"
    assert result.status("per-channel-matches-torch") == "fail"
    assert result.status("round-half-even") == "fail"


def test_a_class_where_a_function_is_asked_for_is_refused(graded):
    result = graded["class_for_function"]
    assert result.code == 1 and result.report["status"] == "error" and not result.report["checks"]
    assert "must be a function, not a class" in result.report["message"]


def test_the_methods_of_the_solutions_classes_return_plain_values():
    """The one place values cross from the learner's objects (a forward, a scaler's scaled loss, an
    early stopper's answer): subclasses come back as their base types; honest results as they are."""
    import types as pytypes

    import torch

    from quizapp.checking.harness import SolutionView

    class Sneaky(torch.Tensor):
        pass

    class Meta(type):
        @property
        def __mro__(cls):
            return (cls, object)

    class Lies(float, metaclass=Meta):
        pass

    module = pytypes.ModuleType("solution")
    kept = [1.0, 2.0]

    class Thing:
        def forward(self):
            return torch.ones(2).as_subclass(Sneaky)

        def answer(self):
            return Lies(0.5)

        def history(self):
            return kept

    Thing.__module__ = "solution"
    module.Thing = Thing
    view = SolutionView(module)
    thing = view.Thing()
    assert type(thing.forward()) is torch.Tensor and type(thing.answer()) is float
    assert thing.history() is kept  # nothing to convert: the object itself
    assert view.Thing is Thing  # the class stays the learner's: isinstance checks still hold


# -- plain(): what comes back from a solution -------------------------------------------------------

torch = pytest.importorskip("torch")


class AnyFloat(float):
    def __eq__(self, other):
        return True

    def __sub__(self, other):
        return AnyFloat(0.0)

    __hash__ = float.__hash__


class Liar(torch.Tensor):
    def item(self):
        return AnyFloat(0.0)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.isclose, torch.allclose, torch.equal):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def test_plain_turns_subclasses_into_base_types_and_keeps_the_graph():
    from quizapp.checking.harness import plain

    x = torch.ones(3, requires_grad=True)
    lie = (x * 2).as_subclass(Liar)
    out = plain(lie)
    assert type(out) is torch.Tensor and out[0].item() == 2.0 and not torch.allclose(out, torch.zeros(3))
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    value = plain([AnyFloat(1.5), (AnyFloat(2.0), {"k": lie}), True, 3])
    assert type(value) is list and type(value[0]) is float and value[0] != 7.0
    assert type(value[1]) is tuple and type(value[1][1]["k"]) is torch.Tensor
    assert value[2] is True and value[3] == 3
    parameter = torch.nn.Parameter(torch.ones(2))
    assert plain(parameter) is parameter


def test_plain_refuses_a_tensor_that_dispatches_itself():
    from quizapp.checking.harness import CheckFailed, plain

    class Dispatching(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(CheckFailed, match="Dispatching"):
        plain(torch.ones(2).as_subclass(Dispatching))


# -- which skips count ---------------------------------------------------------------------------

CHECKS_SOURCE = '''
from quizapp.checking.harness import skip


def needs_cuda(ctx):
    skip("needs CUDA")


def calls(fn, *args):
    fn(*args)


def caught(fn, *args):
    try:
        fn(*args)
    except Exception as exc:
        return exc
'''


def test_a_skip_counts_only_when_every_frame_is_the_checks(tmp_path):
    from quizapp.checking.harness import CheckSkipped, skip, skip_is_the_checks
    from quizapp.checking.loading import load_module

    (tmp_path / "checks.py").write_text(CHECKS_SOURCE)
    checks = load_module("quizapp_test_hostile_checks", tmp_path / "checks.py")

    def solution(ctx):
        skip("says the solution")

    fake = compile("raise CheckSkipped('x')", str(tmp_path / "checks.py"), "exec")
    genuine = checks.caught(checks.needs_cuda, None)
    through_solution = checks.caught(checks.calls, solution, None)
    disguised = checks.caught(exec, fake, {"CheckSkipped": CheckSkipped})
    assert all(isinstance(e, CheckSkipped) for e in (genuine, through_solution, disguised))
    assert skip_is_the_checks(genuine, checks)
    assert not skip_is_the_checks(through_solution, checks)
    assert not skip_is_the_checks(disguised, checks)


SKIPPING_CHECKS = '''
from quizapp.checking.harness import Checks, Required, fail, skip

CHECKS = Checks(Required("answer", "() -> int"))


@CHECKS.add("needs-cuda", "Needs CUDA")
def needs_cuda(ctx):
    skip("needs CUDA")


@CHECKS.add("answer", "The answer is 42")
def answer(ctx):
    if ctx.solution.answer() != 42:
        fail(f"expected 42, got {ctx.solution.answer()}")
'''


@pytest.mark.parametrize("way", ["cold", "warm"])
def test_the_checks_own_skip_is_still_a_skip(tmp_path, way):
    from warmutil import grader

    from quizapp.grading.runner import grade

    exercise = tmp_path / "toy"
    exercise.mkdir()
    (exercise / "checks.py").write_text(SKIPPING_CHECKS)
    (exercise / "reference.py").write_text("def answer():\n    return 42\n")
    solution = tmp_path / "solution.py"
    solution.write_text("def answer():\n    return 42\n")
    report = grade(solution, exercise_record(exercise, "toy"), device="cpu", warm=grader() if way == "warm" else None)
    assert [(c.id, c.status) for c in report.checks] == [("needs-cuda", "skip"), ("answer", "pass")]
    assert report.status == "pass" and report.checks[0].message == "needs CUDA"
