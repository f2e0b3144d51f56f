"""quizapp: learn and prove ML training techniques from the terminal."""

__version__ = "0.1.0"
