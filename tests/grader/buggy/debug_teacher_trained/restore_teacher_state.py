# quizapp: exercise=debug_teacher_trained
# expect: fail matches-fixed-run
# expect: fail teacher-frozen: "40 of 40 teacher forward passes ran with net.1 (BatchNorm1d), net.3 (Dropout)"
import copy

import torch
import torch.nn.functional as F

# A near miss: the teacher's state is saved and put back after distilling; its targets were still noisy.

TEMPERATURE, ALPHA = 2.0, 0.7


def kd_loss(student_logits, teacher_logits, labels):
    soft = F.kl_div(F.log_softmax(student_logits / TEMPERATURE, dim=-1),
                    F.softmax(teacher_logits / TEMPERATURE, dim=-1), reduction="batchmean")
    return ALPHA * TEMPERATURE**2 * soft + (1 - ALPHA) * F.cross_entropy(student_logits, labels)


def distill(student, teacher, batches, optimizer):
    student.train()
    saved = copy.deepcopy(teacher.state_dict())
    losses = []
    for x, y in batches:
        with torch.no_grad():
            teacher_logits = teacher(x)
        loss = kd_loss(student(x), teacher_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    teacher.load_state_dict(saved)
    return losses
