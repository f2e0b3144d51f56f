# quizapp: exercise=debug_teacher_trained
"""Does nothing: the distillation returns at once: no forward pass, no step."""


def distill(student, teacher, batches, optimizer):
    return []
