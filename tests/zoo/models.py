"""The model zoo: real PyTorch models, written as their users write them.

Each entry of ZOO is a function of the size ("ci": small enough for a
2-core machine; "full": the real configuration, for the GPU; "bench": the
real configuration at a training run's batch, for bench/zoo_speed.py, where
a model has one) returning a Case: the model (its forward returns the prediction), its named inputs,
the target and the loss that compares them. Images are NCHW, tokens
int64, as PyTorch's own. Every model is deterministic in training mode:
dropout and stochastic depth are 0, so that kiln and PyTorch compute the
same function; where torchvision's constructor takes widths, "ci" narrows
them (the ResNets have none: they keep their real widths at 64x64).
"""
import collections
import math

import torch
import torch.nn.functional as F
import torchvision
from torch import nn
from torchvision.models import convnext, efficientnet

Case = collections.namedtuple("Case", "model inputs target loss")


def _images(size, channels, classes, ci_side=64):
    # At 64x64 the last stage of the CNNs is 2x2: batch norm over 8 values
    # a channel (at 32x32, 2 values: ill-conditioned enough that PyTorch's
    # own f32 and f64 gradients disagree).
    side, batch = {"full": (224, 8), "bench": (224, 64)}.get(size, (ci_side, 2))
    return ({"x": torch.randn(batch, channels, side, side)},
            torch.randint(0, classes, (batch,)))


def _no_dropout(model):
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    return model


# --- torchvision's image classifiers --------------------------------------

def resnet18(size):
    return Case(torchvision.models.resnet18(num_classes=10), *_images(size, 3, 10),
                "cross_entropy")


def resnet50(size):
    return Case(torchvision.models.resnet50(num_classes=10), *_images(size, 3, 10),
                "cross_entropy")


def mobilenet_v2(size):
    width = 1.0 if size == "full" else 0.25
    model = torchvision.models.mobilenet_v2(num_classes=10, width_mult=width, dropout=0.0)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def efficientnet_b0(size):
    width = 1.0 if size == "full" else 0.25
    setting, last_channel = efficientnet._efficientnet_conf(
        "efficientnet_b0", width_mult=width, depth_mult=1.0)
    model = efficientnet.EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0,
                                      last_channel=last_channel, num_classes=10)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def convnext_tiny(size):
    # ConvNeXt-Tiny's depths (3, 3, 9, 3); widths 96..768, or 16..128.
    base = 96 if size == "full" else 16
    widths = [base, 2 * base, 4 * base, 8 * base]
    setting = [convnext.CNBlockConfig(w, n, d)
               for w, n, d in zip(widths, widths[1:] + [None], [3, 3, 9, 3])]
    model = convnext.ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=10)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def vit(size):
    # ViT-S/16 at 224, or a 2-layer ViT of width 32 on 32x32 with 8x8 patches.
    if size in ("full", "bench"):
        model = torchvision.models.VisionTransformer(
            image_size=224, patch_size=16, num_layers=12, num_heads=6, hidden_dim=384,
            mlp_dim=1536, num_classes=10)
    else:
        model = torchvision.models.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
            mlp_dim=64, num_classes=10)
    return Case(model, *_images(size, 3, 10, ci_side=32), "cross_entropy")


# --- language models ---------------------------------------------------------

def _lm_size(size):
    # (vocabulary, width, heads, layers, sequence, batch); "bench" is GPT-2
    # small's width and depth with a 32k vocabulary.
    return {"full": (512, 256, 4, 4, 128, 8),
            "bench": (32768, 768, 12, 12, 1024, 8)}.get(size, (64, 32, 2, 2, 16, 2))


class CausalLM(nn.Module):
    """GPT-style: token and learned position embeddings, pre-norm
    nn.TransformerEncoder layers with GELU under a causal mask, a final
    LayerNorm and the vocabulary head."""

    def __init__(self, vocab, width, heads, layers, seq):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(0.02 * torch.randn(seq, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        seq = tokens.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(seq)
        h = self.tokens(tokens) + self.positions[:seq]
        return self.head(self.norm(self.blocks(h, mask=mask)))


def gpt(size):
    vocab, width, heads, layers, seq, batch = _lm_size(size)
    tokens = torch.randint(0, vocab, (batch, seq + 1))
    return Case(CausalLM(vocab, width, heads, layers, seq), {"tokens": tokens[:, :-1]},
                tokens[:, 1:], "cross_entropy")


class BertClassifier(nn.Module):
    """BERT-style: token, position and segment embeddings with LayerNorm,
    post-norm encoder layers whose attention skips the padding
    (attention_mask 0), and the pooler (tanh of the first token) under a
    classification head."""

    def __init__(self, vocab, width, heads, layers, seq, classes):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(seq, width)
        self.segments = nn.Embedding(2, width)
        self.norm = nn.LayerNorm(width, eps=1e-12)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.pooler = nn.Linear(width, width)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens, attention_mask):
        positions = torch.arange(tokens.shape[1], device=tokens.device).unsqueeze(0)
        h = self.tokens(tokens) + self.positions(positions) + self.segments(
            torch.zeros_like(tokens))
        h = self.encoder(self.norm(h), src_key_padding_mask=attention_mask == 0)
        return self.head(torch.tanh(self.pooler(h[:, 0])))


def bert(size):
    vocab, width, heads, layers, seq, batch = _lm_size(size)
    tokens = torch.randint(0, vocab, (batch, seq))
    lengths = torch.randint(seq // 2, seq + 1, (batch,))
    lengths[0] = seq
    attention_mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    model = BertClassifier(vocab, width, heads, layers, seq, classes=4)
    return Case(model, {"tokens": tokens, "attention_mask": attention_mask},
                torch.randint(0, 4, (batch,)), "cross_entropy")


class LstmTagger(nn.Module):
    """An embedding, a 2-layer bidirectional LSTM and a per-token head."""

    def __init__(self, vocab, width, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * width, classes)

    def forward(self, tokens):
        return self.head(self.lstm(self.embedding(tokens))[0])


def lstm(size):
    vocab, width, _, _, seq, batch = _lm_size(size)
    return Case(LstmTagger(vocab, width, classes=8),
                {"tokens": torch.randint(0, vocab, (batch, seq))},
                torch.randint(0, 8, (batch, seq)), "cross_entropy")


class GruClassifier(nn.Module):
    """Feature sequences through a 2-layer bidirectional GRU, averaged over
    time, then classified."""

    def __init__(self, features, width, classes):
        super().__init__()
        self.gru = nn.GRU(features, width, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * width, classes)

    def forward(self, x):
        return self.head(self.gru(x)[0].mean(dim=1))


def gru(size):
    _, width, _, _, seq, batch = _lm_size(size)
    return Case(GruClassifier(16, width, classes=4), {"x": torch.randn(batch, seq, 16)},
                torch.randint(0, 4, (batch,)), "cross_entropy")


# --- diffusion -----------------------------------------------------------------

class TimestepEmbedding(nn.Module):
    """The sinusoidal embedding of integer timesteps [B] -> [B, dim]; its
    frequencies are a buffer (an initializer: the same f32 constants in
    PyTorch's f64 reference as in the exported graph)."""

    def __init__(self, dim):
        super().__init__()
        half = dim // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))

    def forward(self, t):
        angles = t.to(self.freqs.dtype)[:, None] * self.freqs[None, :]
        return torch.cat([torch.cos(angles), torch.sin(angles)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class AttentionBlock(nn.Module):
    """Self-attention over the pixels, as the UNets of DDPM and Stable
    Diffusion have it at low resolution."""

    def __init__(self, channels, groups):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.qkv = nn.Conv2d(channels, 3 * channels, 1)
        self.out = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        weights = torch.softmax(q.transpose(1, 2) @ k / math.sqrt(c), dim=-1)
        return x + self.out((v @ weights.transpose(1, 2)).reshape(b, c, h, w))


class UNet(nn.Module):
    """A diffusion UNet: timestep embedding through an MLP, ResBlocks with
    GroupNorm and SiLU, a strided-conv downsampling, attention in the
    middle, nearest upsampling and skip concatenation; predicts the noise."""

    def __init__(self, channels, base, groups):
        super().__init__()
        tdim = 4 * base
        self.time_mlp = nn.Sequential(TimestepEmbedding(base), nn.Linear(base, tdim), nn.SiLU(),
                                      nn.Linear(tdim, tdim))
        self.stem = nn.Conv2d(channels, base, 3, padding=1)
        self.down1 = ResBlock(base, base, tdim, groups)
        self.downsample = nn.Conv2d(base, base, 3, stride=2, padding=1)
        self.down2 = ResBlock(base, 2 * base, tdim, groups)
        self.mid = ResBlock(2 * base, 2 * base, tdim, groups)
        self.attention = AttentionBlock(2 * base, groups)
        self.up2 = ResBlock(4 * base, base, tdim, groups)
        self.upsample = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                      nn.Conv2d(base, base, 3, padding=1))
        self.up1 = ResBlock(2 * base, base, tdim, groups)
        self.out = nn.Sequential(nn.GroupNorm(groups, base), nn.SiLU(),
                                 nn.Conv2d(base, channels, 3, padding=1))

    def forward(self, x, t):
        temb = self.time_mlp(t)
        h1 = self.down1(self.stem(x), temb)
        h2 = self.down2(self.downsample(h1), temb)
        h = self.attention(self.mid(h2, temb))
        h = self.up2(torch.cat([h, h2], dim=1), temb)
        h = self.up1(torch.cat([self.upsample(h), h1], dim=1), temb)
        return self.out(h)


def _diffusion_batch(size, channels, side):
    batch = {"full": 8, "bench": 32}.get(size, 2)
    return ({"x": torch.randn(batch, channels, side, side),
             "t": torch.randint(0, 1000, (batch,))},
            torch.randn(batch, channels, side, side))


def unet(size):
    full = size in ("full", "bench")
    base, side = (64, 64) if full else (16, 16)
    return Case(UNet(3, base, groups=8 if full else 4),
                *_diffusion_batch(size, 3, side), "mse")


class DiTBlock(nn.Module):
    """adaLN modulation: the conditioning gives shift, scale and gate of the
    attention and of the MLP (tanh GELU). The modulation is not
    zero-initialised as in DiT, so that every weight has a gradient; its
    LayerNorms are affine (PyTorch 1.13 exports an affine-free LayerNorm
    without the scale input ONNX requires, which its own checker rejects)."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width, eps=1e-6)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * width, width))
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(width, 6 * width))

    def attention(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(
            2, 0, 3, 1, 4).unbind(0)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(c // self.heads), dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(b, n, c))

    def forward(self, x, c):
        shift1, scale1, gate1, shift2, scale2, gate2 = self.modulation(c)[:, None].chunk(6, dim=2)
        x = x + gate1 * self.attention(self.norm1(x) * (1 + scale1) + shift1)
        return x + gate2 * self.mlp(self.norm2(x) * (1 + scale2) + shift2)


class DiT(nn.Module):
    """Patch embedding, timestep and class conditioning, DiT blocks and the
    adaLN final layer; predicts the noise of each patch, unpatchified."""

    def __init__(self, channels, side, patch, width, heads, depth, classes):
        super().__init__()
        self.patch, self.channels, self.width = patch, channels, width
        self.embed = nn.Conv2d(channels, width, patch, stride=patch)
        self.positions = nn.Parameter(0.02 * torch.randn((side // patch) ** 2, width))
        self.time_mlp = nn.Sequential(TimestepEmbedding(width), nn.Linear(width, width),
                                      nn.SiLU(), nn.Linear(width, width))
        self.classes = nn.Embedding(classes, width)
        self.blocks = nn.ModuleList(DiTBlock(width, heads) for _ in range(depth))
        self.final_norm = nn.LayerNorm(width, eps=1e-6)
        self.final_modulation = nn.Sequential(nn.SiLU(), nn.Linear(width, 2 * width))
        self.final = nn.Linear(width, patch * patch * channels)

    def forward(self, x, t, y):
        b, _, h, w = x.shape
        p, grid = self.patch, h // self.patch
        tokens = self.embed(x).flatten(2).transpose(1, 2) + self.positions
        c = self.time_mlp(t) + self.classes(y)
        for block in self.blocks:
            tokens = block(tokens, c)
        shift, scale = self.final_modulation(c)[:, None].chunk(2, dim=2)
        out = self.final(self.final_norm(tokens) * (1 + scale) + shift)
        out = out.reshape(b, grid, grid, p, p, self.channels).permute(0, 5, 1, 3, 2, 4)
        return out.reshape(b, self.channels, h, w)


def dit(size):
    side, patch, width, heads, depth = (32, 2, 384, 6, 4) if size == "full" else (8, 2, 32, 2, 2)
    inputs, target = _diffusion_batch(size, 4, side)
    inputs["y"] = torch.randint(0, 10, (inputs["x"].shape[0],))
    return Case(DiT(4, side, patch, width, heads, depth, classes=10), inputs, target, "mse")


# --- layers the models above do not use -------------------------------------
# Small at every size: they cover importers and kernels, not speed.

class DcganGenerator(nn.Module):
    """DCGAN's generator: transposed convolutions up from a latent, batch
    norm, ReLU and a tanh image."""

    def __init__(self, latent=16, width=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(latent, width, 4, 1, 0, bias=False),
            nn.BatchNorm2d(width), nn.ReLU(True),
            nn.ConvTranspose2d(width, width // 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(width // 2), nn.ReLU(True),
            nn.ConvTranspose2d(width // 2, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.net(z)


def dcgan(size):
    return Case(DcganGenerator(), {"z": torch.randn(4, 16, 1, 1)},
                torch.randn(4, 3, 16, 16), "mse")


class SuperResolution(nn.Module):
    """ESPCN-style super-resolution: convolutions, instance norm, a pixel
    shuffle (DepthToSpace) and a bilinear skip of the input."""

    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 16, 5, padding=2)
        self.norm = nn.InstanceNorm2d(16, affine=True)
        self.subpixel = nn.Conv2d(16, 12, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        y = self.shuffle(self.subpixel(torch.tanh(self.norm(self.features(x)))))
        return y + F.interpolate(x, scale_factor=2, mode="bilinear",
                                 align_corners=False)


def super_resolution(size):
    return Case(SuperResolution(), {"x": torch.randn(2, 3, 16, 16)},
                torch.randn(2, 3, 32, 32), "mse")


class AudioClassifier(nn.Module):
    """1-D convolutions over a waveform: Conv1d, BatchNorm1d, GELU,
    MaxPool1d and an adaptive average pool."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 16, 9, stride=2, padding=4)
        self.norm1 = nn.BatchNorm1d(16)
        self.conv2 = nn.Conv1d(16, 32, 5, padding=2)
        self.norm2 = nn.BatchNorm1d(32)
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        y = F.max_pool1d(F.gelu(self.norm1(self.conv1(x))), 2)
        y = F.gelu(self.norm2(self.conv2(y)))
        return self.head(F.adaptive_avg_pool1d(y, 1).flatten(1))


def audio(size):
    return Case(AudioClassifier(), {"x": torch.randn(4, 1, 256)},
                torch.randint(0, 10, (4,)), "cross_entropy")


class Translator(nn.Module):
    """nn.Transformer's encoder-decoder (batch_first) with a causal target
    mask and nn.MultiheadAttention's packed projections."""

    def __init__(self, vocab=40, width=32):
        super().__init__()
        self.source = nn.Embedding(vocab, width)
        self.target = nn.Embedding(vocab, width)
        self.transformer = nn.Transformer(width, 4, 1, 1, 64, dropout=0.0,
                                          batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, src, tgt):
        steps = tgt.shape[1]
        mask = torch.triu(torch.full((steps, steps), float("-inf")), 1)
        return self.head(self.transformer(self.source(src), self.target(tgt),
                                          tgt_mask=mask))


def translator(size):
    return Case(Translator(),
                {"src": torch.randint(0, 40, (2, 10)), "tgt": torch.randint(0, 40, (2, 8))},
                torch.randint(0, 40, (2, 8)), "cross_entropy")


def swin(size):
    """torchvision's Swin Transformer: shifted windows (torch.roll), the
    relative position bias gathered by index, and the attention mask of the
    shifted windows, which PyTorch builds by slice assignment (ScatterND)."""
    from torchvision.models import swin_transformer
    full = size == "full"
    model = swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=96 if full else 16,
        depths=[2, 2, 6, 2] if full else [2, 2],
        num_heads=[3, 6, 12, 24] if full else [2, 4], window_size=[7, 7] if full else [4, 4],
        stochastic_depth_prob=0.0, num_classes=10)
    side = 224 if full else 32
    return Case(model, {"x": torch.randn(8 if full else 2, 3, side, side)},
                torch.randint(0, 10, (8 if full else 2,)), "cross_entropy")


ZOO = collections.OrderedDict((f.__name__, f) for f in [
    resnet18, resnet50, mobilenet_v2, efficientnet_b0, convnext_tiny, vit,
    gpt, bert, lstm, gru, unet, dit, dcgan, super_resolution, audio,
    translator, swin])


# --- the extended set ------------------------------------------------------
# More architectures as users bring them, checked like the zoo's own by
# `zoo.py check --models extended` (or by name) but not in CI's run, which
# they would lengthen by about an hour on two cores: torchvision's other
# classifiers and segmentation nets, a style-transfer net, bidirectional
# RNN LMs, attention with a boolean padding mask and a dilated 1-d
# convolution net. Their sizes are the CI sizes.


def densenet(size):
    # DenseNet's dense blocks and transitions, narrowed: growth 8, 2 layers a block.
    model = torchvision.models.DenseNet(growth_rate=8, block_config=(2, 2, 2, 2),
                                        num_init_features=16, num_classes=10)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def squeezenet(size):
    model = _no_dropout(torchvision.models.squeezenet1_1(num_classes=10))
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def googlenet(size):
    model = torchvision.models.GoogLeNet(num_classes=10, aux_logits=False,
                                         transform_input=False, init_weights=True, dropout=0.0)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def shufflenet(size):
    model = torchvision.models.shufflenet_v2_x0_5(num_classes=10)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def mobilenet_v3(size):
    model = _no_dropout(torchvision.models.mobilenet_v3_small(num_classes=10))
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def regnet(size):
    model = torchvision.models.regnet_y_400mf(num_classes=10)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def mnasnet(size):
    model = _no_dropout(torchvision.models.mnasnet0_5(num_classes=10))
    return Case(model, *_images(size, 3, 10), "cross_entropy")


def resnext(size):
    # ResNeXt's grouped bottlenecks (8 groups of 4), one block a stage.
    model = torchvision.models.ResNet(torchvision.models.resnet.Bottleneck, [1, 1, 1, 1],
                                      num_classes=10, groups=8, width_per_group=4)
    return Case(model, *_images(size, 3, 10), "cross_entropy")


class _Seg(nn.Module):
    """A torchvision segmentation net's "out" logits, classes last: the
    cross entropy is per pixel."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"].permute(0, 2, 3, 1)


def deeplab(size):
    model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        num_classes=5, weights_backbone=None, aux_loss=False)
    x, _ = _images(size, 3, 5)
    side = x["x"].shape[-1]
    return Case(_Seg(_no_dropout(model)), x, torch.randint(0, 5, (2, side, side)),
                "cross_entropy")


def fcn(size):
    model = torchvision.models.segmentation.fcn_resnet50(num_classes=5, weights_backbone=None,
                                                         aux_loss=False)
    x, _ = _images(size, 3, 5, ci_side=32)
    side = x["x"].shape[-1]
    return Case(_Seg(_no_dropout(model)), x, torch.randint(0, 5, (2, side, side)),
                "cross_entropy")


class _Style(nn.Module):
    """The fast neural style transfer net: reflection pads, instance norm,
    nearest upsampling."""

    def __init__(self):
        super().__init__()

        def conv(i, o, k, s=1, up=None):
            layers = []
            if up:
                layers.append(nn.Upsample(scale_factor=up, mode="nearest"))
            layers += [nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, s)]
            return layers

        def block(c):
            return nn.Sequential(*conv(c, c, 3), nn.InstanceNorm2d(c, affine=True), nn.ReLU(),
                                 *conv(c, c, 3), nn.InstanceNorm2d(c, affine=True))
        self.down = nn.Sequential(*conv(3, 8, 9), nn.InstanceNorm2d(8, affine=True), nn.ReLU(),
                                  *conv(8, 16, 3, 2), nn.InstanceNorm2d(16, affine=True),
                                  nn.ReLU())
        self.res = nn.ModuleList([block(16), block(16)])
        self.up = nn.Sequential(*conv(16, 8, 3, up=2), nn.InstanceNorm2d(8, affine=True),
                                nn.ReLU(), *conv(8, 3, 9))

    def forward(self, x):
        y = self.down(x)
        for b in self.res:
            y = y + b(y)
        return self.up(y)


def style(size):
    x = torch.randn(2, 3, 32, 32)
    return Case(_Style(), {"x": x}, torch.randn(2, 3, 32, 32), "mse")


class _RnnLM(nn.Module):
    def __init__(self, kind, bidirectional):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        cls = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}[kind]
        self.rnn = cls(16, 24, num_layers=2, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(48 if bidirectional else 24, 50)

    def forward(self, tokens):
        out, _ = self.rnn(self.emb(tokens))
        return self.head(out)


def birnn(size):
    tokens = torch.randint(0, 50, (3, 7))
    return Case(_RnnLM("rnn", True), {"tokens": tokens}, torch.randint(0, 50, (3, 7)),
                "cross_entropy")


def bilstm(size):
    tokens = torch.randint(0, 50, (3, 7))
    return Case(_RnnLM("lstm", True), {"tokens": tokens}, torch.randint(0, 50, (3, 7)),
                "cross_entropy")


class _Mha(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 32)
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 40)

    def forward(self, tokens, mask):
        x = self.emb(tokens)
        y, _ = self.attn(x, x, x, key_padding_mask=mask)
        return self.head(self.norm(x + y))


def mha_padding(size):
    tokens = torch.randint(0, 40, (2, 9))
    mask = torch.zeros(2, 9, dtype=torch.bool)
    mask[1, 6:] = True
    return Case(_Mha(), {"tokens": tokens, "mask": mask}, torch.randint(0, 40, (2, 9)),
                "cross_entropy")


class _Tcn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 16, 3, dilation=1, padding=2)
        self.c2 = nn.Conv1d(16, 16, 3, dilation=2, padding=4)
        self.bn = nn.BatchNorm1d(16)
        self.pool = nn.AdaptiveMaxPool1d(1)
        self.head = nn.Linear(16, 6)

    def forward(self, x):
        y = F.gelu(self.c1(x))[..., :-2]
        y = F.leaky_relu(self.bn(self.c2(y)[..., :-4]), 0.1)
        return self.head(self.pool(y).flatten(1))


def tcn(size):
    return Case(_Tcn(), {"x": torch.randn(3, 4, 20)}, torch.randint(0, 6, (3,)),
                "cross_entropy")


EXTENDED = collections.OrderedDict((f.__name__, f) for f in [
    densenet, squeezenet, googlenet, shufflenet, mobilenet_v3, regnet, mnasnet, resnext,
    deeplab, fcn, style, birnn, bilstm, mha_padding, tcn])

# Every model by name: the zoo's and the extended set's.
ALL = collections.OrderedDict(list(ZOO.items()) + list(EXTENDED.items()))


class WithLoss(nn.Module):
    """The model and its loss in one graph, as kiln trains it: the inputs
    and the target in, the scalar loss out."""

    def __init__(self, model, loss):
        super().__init__()
        self.model, self.loss = model, loss

    def forward(self, *args):
        *inputs, target = args
        out = self.model(*inputs)
        if self.loss == "mse":  # (the exporter has no F.mse_loss)
            return ((out - target) ** 2).mean()
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))
