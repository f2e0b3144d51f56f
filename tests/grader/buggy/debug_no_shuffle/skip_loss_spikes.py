# quizapp: exercise=debug_no_shuffle
# expect: fail batches-mix-classes
# expect: fail honest-fix: "optimizer steps ran where the fixed script takes 48"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A cosmetic fix: the spiking steps (a new class's first batches) are not stepped on.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    loader = DataLoader(dataset, batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            losses.append(loss.item())
            if loss.item() > 2.0:
                continue
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return losses
