# quizapp: exercise=debug_log_softmax
# expect: fail matches-fixed-run: "the loss at step 0 is 1.67212 where the fixed script's is 26.2357"
import torch
import torch.nn.functional as F

# Not a fix: the hand-written cross-entropy is left as it is, and the class of the model it is handed
# gets a forward without the logit scale. When the fixed run was built afterwards from that same
# class, it trained the same tamed model and agreed.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    def tame(self, x):
        return F.normalize(self.body(x), dim=-1) @ F.normalize(self.classes, dim=-1).T

    type(model).forward = tame
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
