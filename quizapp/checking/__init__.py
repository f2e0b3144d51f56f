"""The checking side of the grader: what runs in the solution's own process (it imports torch).

`entry` is the child's entry point (`python -m quizapp.checking.entry`); `harness` and `drill` are the
public face an exercise's checks are written on (exercises import from this package and nothing else
of quizapp); `protocol` and `reaping` are the torch-free parts the parent side (`quizapp.grading`)
shares with it.
"""
