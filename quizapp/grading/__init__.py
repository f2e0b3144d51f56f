"""Grading a learner's solution: the parent side (no torch) runs the child side in its own process."""
