# quizapp: exercise=debug_teacher_trained
# expect: fail matches-fixed-run: "6 teacher parameters hold gradients after distillation" "torch.no_grad()"
import torch.nn.functional as F

# A near miss: teacher.eval(), but the teacher's logits are not computed under no_grad: gradients reach the teacher.

TEMPERATURE, ALPHA = 2.0, 0.7


def kd_loss(student_logits, teacher_logits, labels):
    soft = F.kl_div(F.log_softmax(student_logits / TEMPERATURE, dim=-1),
                    F.softmax(teacher_logits / TEMPERATURE, dim=-1), reduction="batchmean")
    return ALPHA * TEMPERATURE**2 * soft + (1 - ALPHA) * F.cross_entropy(student_logits, labels)


def distill(student, teacher, batches, optimizer):
    student.train()
    teacher.eval()
    losses = []
    for x, y in batches:
        teacher_logits = teacher(x)
        loss = kd_loss(student(x), teacher_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
