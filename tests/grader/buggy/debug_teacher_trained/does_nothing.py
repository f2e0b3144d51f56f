# quizapp: exercise=debug_teacher_trained
# expect: fail honest-fix matches-fixed-run
# expect: skip teacher-frozen
"""Does nothing: the distillation returns at once: no forward pass, no step."""


def distill(student, teacher, batches, optimizer):
    return []
