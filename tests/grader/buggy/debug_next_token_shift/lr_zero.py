# quizapp: exercise=debug_next_token_shift
# expect: fail predicts-next-token
# expect: fail honest-fix: "the learning rate was 0 at all 50 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: with the learning rate at 0 the model cannot learn to copy (or anything else).

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens.reshape(-1))


def train(model, batches, optimizer):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
