# quizapp: exercise=debug_no_shuffle
# expect: fail batches-mix-classes
# expect: fail honest-fix: "the learning rate was 0 at all 48 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A cosmetic fix: with the learning rate at 0 the model cannot be pulled toward any class.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    loader = DataLoader(dataset, batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
