# quizapp: exercise=debug_log_softmax
# expect: fail matches-fixed-run: "the loss at step 0 is 1.67212 where the fixed script's is 26.2357"
import sys

import torch

# Not a fix: the hand-written cross-entropy is left as it is, and the model it is handed is made
# harmless instead, by lowering the logit scale in the module that defines its class. When the fixed
# run was built afterwards from that same module, it trained the same tamed model and agreed.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    sys.modules[type(model).__module__].LOGIT_SCALE = 1.0
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
