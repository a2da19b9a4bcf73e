"""Pre-LayerNorm multi-head self-attention block with a residual connection.

out = x + proj(SDPA(split_heads(qkv(LayerNorm(x))))), with x of shape (8, 512, 512), 8 heads of
64, non-causal torch.nn.functional.scaled_dot_product_attention.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ_LEN = 512
EMBED_DIM = 512
NUM_HEADS = 8


class Model(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.ln = nn.LayerNorm(embed_dim)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        head_dim = dim // self.num_heads
        qkv = self.qkv(self.ln(x))
        qkv = qkv.view(batch, seq, 3, self.num_heads, head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.scaled_dot_product_attention(q, k, v)
        attn = attn.transpose(1, 2).reshape(batch, seq, dim)
        return x + self.proj(attn)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, EMBED_DIM)]


def get_init_inputs():
    return [EMBED_DIM, NUM_HEADS]
