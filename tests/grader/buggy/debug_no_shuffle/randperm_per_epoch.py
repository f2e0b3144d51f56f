# quizapp: exercise=debug_no_shuffle
# expect: fail matches-fixed-run: "your order is torch.randperm(n, generator=generator) once per epoch"
import torch
import torch.nn.functional as F

# A near miss: a permutation per epoch from the generator, drawn by hand with randperm.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    inputs, labels = dataset.tensors
    losses = []
    for _ in range(EPOCHS):
        order = torch.randperm(len(dataset), generator=generator).to(inputs.device)
        for start in range(0, len(order), BATCH):
            index = order[start:start + BATCH]
            x, y = inputs[index], labels[index]
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
