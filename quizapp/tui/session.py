"""What a study session produced: the quiz screen's session fills it in, the summary screen shows it.

The result belongs to the headless session (quizapp.study.session), which `quizapp review` drives too.
"""

from quizapp.study.session import Answered, SessionResult

__all__ = ["Answered", "SessionResult"]
