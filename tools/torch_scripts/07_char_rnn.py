"""A character-level LSTM language model on one sentence: Embedding, LSTM, Linear, gradient
clipping, greedy generation, and sampling checks that hold whatever the seed."""

import torch
from torch import nn

text = "hello world, hello tensors. "
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text])
vocab = len(chars)


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.rnn = nn.LSTM(8, 16, batch_first=True)
        self.out = nn.Linear(16, vocab)

    def forward(self, idx, state=None):
        h, state = self.rnn(self.embed(idx), state)
        return self.out(h), state


model = CharModel()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.7 + i).reshape(p.shape) * 0.2
        )
optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
inputs, targets = data[:-1].unsqueeze(0), data[1:].unsqueeze(0)

for step in range(60):
    logits, _ = model(inputs)
    loss = nn.functional.cross_entropy(logits.view(-1, vocab), targets.view(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % 20 == 19:
        print(f"step {step + 1} loss {loss.item():.5f}")

with torch.no_grad():
    idx = torch.tensor([[stoi["h"]]])
    state = None
    generated = "h"
    for _ in range(12):
        logits, state = model(idx, state)
        nxt = logits[0, -1].argmax().item()
        generated += chars[nxt]
        idx = torch.tensor([[nxt]])
print("greedy:", repr(generated))

# sampling: results that do not depend on the random stream
probs = torch.softmax(logits[0, -1], dim=0)
print("probs sum", f"{probs.sum().item():.5f}")
draw = torch.multinomial(probs, vocab)  # without replacement: a permutation
print("permutation", sorted(draw.tolist()) == list(range(vocab)))
one_hot = torch.zeros(vocab)
one_hot[3] = 1.0
print("certain draws", torch.multinomial(one_hot, 4, replacement=True).tolist())
