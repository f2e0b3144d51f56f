"""Grading a learner's solution, the parent side (no torch): it starts the checking side
(`quizapp.checking`) in a process of its own, reads its signed events and keeps the result."""
