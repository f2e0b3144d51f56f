# quizapp: exercise=debug_half_adam_eps
# expect: fail honest-fix: "Adam's eps at step 0 was 0.0001 where the grader's optimizer has 1e-08"
# expect: says honest-fix: "the weights it updated are still float16"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: Adam's eps raised to 1e-4, which float16 can hold (glide-finetune#6); the weights stay float16.


def train(model, batches, optimizer, log=None):
    model.half()
    for group in optimizer.param_groups:
        group["eps"] = 1e-4
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
