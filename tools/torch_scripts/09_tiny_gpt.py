"""A tiny GPT: token and position embeddings, causal TransformerEncoder blocks, a tied
output head, AdamW, next-token loss, and greedy generation."""

import torch
from torch import nn

text = "to be or not to be, that is the question. "
vocab = sorted(set(text))
encode = {c: i for i, c in enumerate(vocab)}
tokens = torch.tensor([encode[c] for c in text])
block = 16


class TinyGPT(nn.Module):
    def __init__(self, n_vocab, d_model=16, n_head=2, n_layer=2):
        super().__init__()
        self.tok = nn.Embedding(n_vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, n_head, dim_feedforward=32, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d_model)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(block))

    def forward(self, idx):
        t = idx.shape[1]
        h = self.tok(idx) + self.pos(torch.arange(t))
        h = self.blocks(h, mask=self.mask[:t, :t], is_causal=True)
        return self.ln(h) @ self.tok.weight.T  # the head shares the embedding matrix


model = TinyGPT(len(vocab))
with torch.no_grad():  # a generator-independent start; LayerNorms keep weight 1, bias 0
    for i, (name, p) in enumerate(sorted(model.named_parameters())):
        if "norm" not in name and not name.startswith("ln."):
            scale = 0.3 if p.dim() > 1 else 0.05
            p.copy_(torch.cos(torch.arange(p.numel()) * 0.37 + i).reshape(p.shape) * scale)
print("parameters", sum(p.numel() for p in model.parameters()))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
starts = torch.arange(0, len(tokens) - block - 1, 4)
x = torch.stack([tokens[s : s + block] for s in starts.tolist()])
y = torch.stack([tokens[s + 1 : s + block + 1] for s in starts.tolist()])

for step in range(80):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 20 == 19:
        print(f"step {step + 1:3d} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    idx = tokens[:4].unsqueeze(0)
    for _ in range(12):
        nxt = model(idx[:, -block:])[0, -1].argmax()
        idx = torch.cat([idx, nxt.view(1, 1)], dim=1)
print("generated", repr("".join(vocab[i] for i in idx[0].tolist())))
