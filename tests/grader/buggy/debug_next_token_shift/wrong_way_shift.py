# quizapp: exercise=debug_next_token_shift
# expect: fail predicts-next-token: "the training loss ends at 0.0147, below the 0.990 nats"
# expect: says predicts-next-token: "the token before that 100%"
# expect: fail matches-fixed-run: "the targets are shifted the wrong way"
# expect: lacks matches-fixed-run: "the targets are not shifted at all" "the targets are shifted twice"
# expect: lacks matches-fixed-run: "torch.roll wraps"
import torch.nn.functional as F

# A near miss: shifted the wrong way, so position t is scored against token t - 1, which it can see.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits[:, 1:].reshape(-1, VOCAB), tokens[:, :-1].reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
