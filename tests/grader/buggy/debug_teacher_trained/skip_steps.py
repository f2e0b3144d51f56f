# quizapp: exercise=debug_teacher_trained
# expect: fail teacher-frozen
# expect: fail honest-fix: "20 optimizer steps ran where the fixed script takes 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: every other batch skipped, so the teacher sees half as many.

TEMPERATURE, ALPHA = 2.0, 0.7


def kd_loss(student_logits, teacher_logits, labels):
    soft = F.kl_div(F.log_softmax(student_logits / TEMPERATURE, dim=-1),
                    F.softmax(teacher_logits / TEMPERATURE, dim=-1), reduction="batchmean")
    return ALPHA * TEMPERATURE**2 * soft + (1 - ALPHA) * F.cross_entropy(student_logits, labels)


def distill(student, teacher, batches, optimizer):
    student.train()
    losses = []
    for x, y in batches[::2]:
        with torch.no_grad():
            teacher_logits = teacher(x)
        loss = kd_loss(student(x), teacher_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
