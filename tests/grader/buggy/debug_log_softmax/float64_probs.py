# quizapp: exercise=debug_log_softmax
# expect: fail honest-fix: "640 operations computed in float64 where the fixed script computes none"
# expect: says honest-fix: "larger logits bring the NaN back"
import torch

# A cosmetic fix: the same log(softmax(...)) in float64, cast back. float64's exp underflows only from
# about -745, so at this drill's logit scale nothing is NaN, but the probability is still formed and
# larger logits bring the NaN back.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits.double(), dim=-1)
    return (-torch.log(probs).gather(1, targets[:, None]).mean()).float()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
