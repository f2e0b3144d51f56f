"""The mock interview: plan it, run it against a clock, score it, keep it. Never imports torch or textual."""

from quizapp.interview.plan import DEFAULT_MINUTES, Plan, PlanError, make_plan
from quizapp.interview.report import ReportCard
from quizapp.interview.session import Interview

__all__ = ["DEFAULT_MINUTES", "Interview", "Plan", "PlanError", "ReportCard", "make_plan"]
