# quizapp: exercise=debug_next_token_shift
# expect: fail predicts-next-token: "next-token loss is 3.864 nats where the fixed run's is 1.042"
# expect: fail matches-fixed-run: "the targets are shifted twice"
# expect: lacks matches-fixed-run: "the targets are not shifted at all" "the targets are shifted the wrong way"
# expect: lacks matches-fixed-run: "torch.roll wraps"
import torch.nn.functional as F

# A near miss: the targets shifted twice (labels pre-shifted, then shifted again): next-next-token prediction.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits[:, :-2].reshape(-1, VOCAB), tokens[:, 2:].reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
