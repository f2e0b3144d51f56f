# quizapp: exercise=debug_teacher_trained
# expect: fail teacher-frozen
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: with the learning rate at 0 the student never moves; the teacher still drifts.

TEMPERATURE, ALPHA = 2.0, 0.7


def kd_loss(student_logits, teacher_logits, labels):
    soft = F.kl_div(F.log_softmax(student_logits / TEMPERATURE, dim=-1),
                    F.softmax(teacher_logits / TEMPERATURE, dim=-1), reduction="batchmean")
    return ALPHA * TEMPERATURE**2 * soft + (1 - ALPHA) * F.cross_entropy(student_logits, labels)


def distill(student, teacher, batches, optimizer):
    student.train()
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    losses = []
    for x, y in batches:
        with torch.no_grad():
            teacher_logits = teacher(x)
        loss = kd_loss(student(x), teacher_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
