"""The test run never writes to the learner's real data folder, module-scoped fixtures included."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizapp import paths
from quizapp.grading.record import record_grade
from quizapp.grading.result import GradeReport
from quizapp.study.store import Store


@pytest.fixture(scope="module")
def graded_before_any_test_fixture():
    """As the grader tests' module fixtures do: record a grade before the per-test home exists."""
    report = GradeReport(exercise="isolation", file="x.py", status="pass", message=None, device="cpu",
                         torch="t", duration_s=0.0)
    assert record_grade(report, Path(__file__)) is None
    return paths.db_path()


def test_module_fixtures_write_to_the_session_temp_home(graded_before_any_test_fixture, pytestconfig):
    where = graded_before_any_test_fixture
    assert where.is_relative_to(pytestconfig.quizapp_session_dir)
    assert not where.is_relative_to(pytestconfig.quizapp_real_data_dir)
    with Store.open(where) as store:  # with whatever other modules' fixtures graded before this one
        assert "isolation" in [g.exercise_id for g in store.grades()]


def test_each_test_has_its_own_home_inside_its_tmp_path(tmp_path, pytestconfig):
    assert paths.data_dir() == tmp_path / "quizapp-home"
    assert not paths.db_path().is_relative_to(pytestconfig.quizapp_real_data_dir)


def test_without_quizapp_home_the_fallback_is_a_temp_folder(monkeypatch, pytestconfig):
    monkeypatch.delenv("QUIZAPP_HOME")
    assert paths.data_dir().is_relative_to(pytestconfig.quizapp_session_dir)
