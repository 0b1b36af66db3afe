#!/usr/bin/env python3
"""Golden cases for the lab's TRL and OpenRLHF training-inference importance-sampling kernels.

Writes test/golden/trl-openrlhf-is.json, read by src/core/trlVllmIs.test.ts and
src/core/openrlhfVllmIs.test.ts. Run from the repository root:

    python3 scripts/golden/trl_openrlhf_is.py

torch is not installed here, so each framework's torch code is transcribed line by line in numpy,
float64 throughout. Every numpy line sits under the torch line it transcribes (comment `# torch:`),
so a reviewer can check the transcription against the cited source:

* TRL, commit f2cd57710ae345ea6428ae95363267fcf38a3dc8 (2026-07-24), trl/trainer/grpo_trainer.py,
  GRPOTrainer._generate_and_score_completions: the block "Compute the importance sampling ratio when
  using vLLM" (lines 2578-2623) and the `sampling/...` metrics (lines 2779-2813); defaults from
  trl/trainer/grpo_config.py (GRPOConfig fields and __post_init__, lines 915-952, 1026-1150).
* OpenRLHF, commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7 (2026-08-13), openrlhf/models/loss.py,
  PolicyLoss.forward (lines 195-218) and openrlhf/models/utils.py masked_mean (lines 166-169);
  flags from openrlhf/cli/train_ppo_ray.py (lines 257-271).

The frameworks run these lines on float32 tensors (vLLM log-probs and the trainer's recomputed
log-probs); the audit reads the dumps' values into float64, so these cases are float64 and the lab
matches them to ~1e-12 relative. In float32 exp() overflows at a log-ratio of 88.7, not 709.8: see the
kernels' doc comments.

Only deterministic, seeded inputs (numpy default_rng(seed)); rerunning gives the same bytes.
"""

import json
import math
import os

import numpy as np

TRL_COMMIT = "f2cd57710ae345ea6428ae95363267fcf38a3dc8"
OPENRLHF_COMMIT = "3c3be6234e0cb353e76bb8019947db9dfe99fca7"
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "trl-openrlhf-is.json")


# ── TRL ────────────────────────────────────────────────────────────────────────────────────────
def trl_vllm_is(old_per_token_logps, sampling_per_token_logps, completion_mask, mode, clip_min, clip_max):
    """TRL GRPOTrainer._generate_and_score_completions, IS block and `sampling/...` metrics.

    Returns TRL's `importance_sampling_ratio` tensor ((B,T) token modes, (B,1) sequence modes),
    the per-token keep decision of the mask modes, and the five logged metrics (one process)."""
    # torch: mask = completion_mask if tool_mask is None else completion_mask * tool_mask
    mask = completion_mask  # the dump's loss mask already is completion_mask * tool_mask
    # torch: per_token_logps_diff = (old_per_token_logps - sampling_per_token_logps) * mask
    per_token_logps_diff = (old_per_token_logps - sampling_per_token_logps) * mask

    # torch: sequence_level_is = self.vllm_importance_sampling_mode in ["sequence_mask", "sequence_truncate"]
    sequence_level_is = mode in ["sequence_mask", "sequence_truncate"]
    # torch: if sequence_level_is:
    if sequence_level_is:
        # torch: per_sequence_logps_diff = per_token_logps_diff.sum(dim=-1, keepdim=True)
        per_sequence_logps_diff = per_token_logps_diff.sum(axis=-1, keepdims=True)
        # torch: logps_diff = per_sequence_logps_diff
        logps_diff = per_sequence_logps_diff
    else:
        # torch: logps_diff = per_token_logps_diff
        logps_diff = per_token_logps_diff

    # torch: vllm_importance_sampling_ratio = torch.exp(logps_diff)
    vllm_importance_sampling_ratio = np.exp(logps_diff)
    keep = np.ones_like(vllm_importance_sampling_ratio, dtype=bool)

    # torch: if self.vllm_importance_sampling_mode in ["sequence_truncate", "token_truncate"]:
    if mode in ["sequence_truncate", "token_truncate"]:
        # torch: vllm_importance_sampling_ratio = torch.clamp(vllm_importance_sampling_ratio,
        # torch:     min=self.vllm_importance_sampling_clip_min, max=self.vllm_importance_sampling_clip_max)
        #        (torch.clamp: a None bound is no bound; np.clip takes None the same way)
        vllm_importance_sampling_ratio = np.clip(vllm_importance_sampling_ratio, clip_min, clip_max)
    # torch: elif self.vllm_importance_sampling_mode in ["sequence_mask", "token_mask"]:
    elif mode in ["sequence_mask", "token_mask"]:
        # torch: min_val = self.vllm_importance_sampling_clip_min if ... is not None else -math.inf
        min_val = clip_min if clip_min is not None else -math.inf
        # torch: max_val = self.vllm_importance_sampling_clip_max if ... is not None else math.inf
        max_val = clip_max if clip_max is not None else math.inf
        # torch: invalid_mis_mask = (vllm_importance_sampling_ratio < min_val) | (vllm_importance_sampling_ratio > max_val)
        invalid_mis_mask = (vllm_importance_sampling_ratio < min_val) | (vllm_importance_sampling_ratio > max_val)
        # torch: vllm_importance_sampling_ratio = vllm_importance_sampling_ratio.masked_fill(invalid_mis_mask, value=0.0)
        vllm_importance_sampling_ratio = np.where(invalid_mis_mask, 0.0, vllm_importance_sampling_ratio)
        keep = ~invalid_mis_mask
    else:
        raise ValueError(mode)

    # Metrics, lines 2779-2813 (one process: accelerator.gather of one value is that value)
    # torch: delta = torch.abs(old_per_token_logps - sampling_per_token_logps)
    delta = np.abs(old_per_token_logps - sampling_per_token_logps)
    # torch: mask = completion_mask.bool() if tool_mask is None else (completion_mask * tool_mask).bool()
    maskb = completion_mask.astype(bool)
    # torch: delta = delta[mask]
    delta = delta[maskb]
    # torch: mean_delta = torch.mean(delta) if delta.numel() > 0 else torch.tensor(0.0, device=device)
    mean_delta = float(np.mean(delta)) if delta.size > 0 else 0.0
    # torch: max_delta = torch.max(delta) if delta.numel() > 0 else torch.tensor(0.0, device=device)
    max_delta = float(np.max(delta)) if delta.size > 0 else 0.0
    # torch: if sequence_level_is: flat_is_ratio = vllm_importance_sampling_ratio.flatten()
    # torch: else: flat_is_ratio = vllm_importance_sampling_ratio[mask]
    if sequence_level_is:
        flat_is_ratio = vllm_importance_sampling_ratio.flatten()
    else:
        flat_is_ratio = vllm_importance_sampling_ratio[maskb]
    # torch: min/mean/max_importance_sampling_ratio = torch.min/mean/max(flat_is_ratio) if numel() > 0 else 0.0
    n = flat_is_ratio.size
    metrics = {
        # torch: self._metrics[mode]["sampling/sampling_logp_difference/mean"].append(gather(mean_delta).mean())
        "sampling/sampling_logp_difference/mean": mean_delta,
        # torch: self._metrics[mode]["sampling/sampling_logp_difference/max"].append(gather(max_delta).max())
        "sampling/sampling_logp_difference/max": max_delta,
        # torch: ...["sampling/importance_sampling_ratio/min"].append(nanmin(gather(min_importance_sampling_ratio)))
        "sampling/importance_sampling_ratio/min": float(np.min(flat_is_ratio)) if n > 0 else 0.0,
        # torch: ...["sampling/importance_sampling_ratio/mean"].append(gather(mean_importance_sampling_ratio).nanmean())
        "sampling/importance_sampling_ratio/mean": float(np.mean(flat_is_ratio)) if n > 0 else 0.0,
        # torch: ...["sampling/importance_sampling_ratio/max"].append(nanmax(gather(max_importance_sampling_ratio)))
        "sampling/importance_sampling_ratio/max": float(np.max(flat_is_ratio)) if n > 0 else 0.0,
    }
    # What multiplies the loss: per_token_loss * inputs["importance_sampling_ratio"] (line 3118), a (B,1)
    # ratio broadcast over the row; the loss is then masked ((per_token_loss * mask).sum(-1) ...).
    shape = completion_mask.shape
    applied = np.where(maskb, np.broadcast_to(vllm_importance_sampling_ratio, shape), 0.0)
    new_mask = maskb & np.broadcast_to(keep, shape)
    return vllm_importance_sampling_ratio, applied, new_mask, metrics


# ── OpenRLHF ───────────────────────────────────────────────────────────────────────────────────
def openrlhf_masked_mean(tensor, mask, dim=None):
    """openrlhf/models/utils.py masked_mean: no epsilon in the denominator."""
    # torch: if mask is None: return tensor.mean(dim=dim)   (the loss always passes a mask)
    # torch: return (tensor * mask).sum(dim=dim) / mask.sum(dim=dim)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (tensor * mask).sum(axis=dim) / mask.sum(axis=dim)


def openrlhf_vllm_is(old_log_probs, rollout_log_probs, action_mask, correction_type, low_threshold, high_threshold):
    """OpenRLHF PolicyLoss.forward, the vLLM IS block (policy_loss_type == "ppo")."""
    with np.errstate(over="ignore", invalid="ignore"):
        # torch: rollout_log_ratio = old_log_probs - rollout_log_probs
        rollout_log_ratio = old_log_probs - rollout_log_probs
        # torch: if self.vllm_is_correction_type == "icepop":
        if correction_type == "icepop":
            # torch: vllm_is = torch.exp(rollout_log_ratio).detach()
            vllm_is = np.exp(rollout_log_ratio)
            # torch: mask = (vllm_is >= low_threshold) & (vllm_is <= high_threshold)
            mask = (vllm_is >= low_threshold) & (vllm_is <= high_threshold)
            # torch: vllm_is = vllm_is * mask
            vllm_is = vllm_is * mask
            # torch: loss = vllm_is * loss
            coefficient = vllm_is
            keep = mask
        # torch: elif self.vllm_is_correction_type == "seq-mask-tis":
        elif correction_type == "seq-mask-tis":
            # torch: seq_log_ratio = masked_mean(rollout_log_ratio, action_mask, dim=-1)
            seq_log_ratio = openrlhf_masked_mean(rollout_log_ratio, action_mask, dim=-1)
            # torch: seq_is = torch.exp(seq_log_ratio)
            seq_is = np.exp(seq_log_ratio)
            # torch: seq_mask = (seq_is >= low_threshold) & (seq_is <= high_threshold)
            seq_mask = (seq_is >= low_threshold) & (seq_is <= high_threshold)
            # torch: vllm_is = torch.exp(rollout_log_ratio).detach()
            vllm_is = np.exp(rollout_log_ratio)
            # torch: loss = seq_mask.unsqueeze(-1) * vllm_is * loss
            coefficient = seq_mask[:, None] * vllm_is
            keep = np.broadcast_to(seq_mask[:, None], action_mask.shape)
        # torch: else:  (tis)
        elif correction_type == "tis":
            # torch: vllm_is = torch.exp(rollout_log_ratio).clamp(min=low_threshold, max=high_threshold).detach()
            vllm_is = np.clip(np.exp(rollout_log_ratio), low_threshold, high_threshold)
            # torch: loss = vllm_is * loss
            coefficient = vllm_is
            keep = np.ones_like(action_mask, dtype=bool)
        else:
            raise ValueError(correction_type)
        # torch: vllm_kl = masked_mean(rollout_log_probs - old_log_probs, action_mask, dim=None)
        vllm_kl = float(openrlhf_masked_mean(rollout_log_probs - old_log_probs, action_mask, dim=None))
    # The loss is then aggregated with loss * loss_mask (aggregate_loss), so only action-mask tokens count.
    maskb = action_mask.astype(bool)
    applied = np.where(maskb, coefficient, 0.0)
    new_mask = maskb & keep
    return coefficient, applied, new_mask, {"vllm_kl": vllm_kl}


# ── The comparable summary: verl's definitions on the weights that multiply the loss ───────────
def summary(applied, mask, new_mask):
    """verl rollout_corr_helper formulas (masked_mean = sum / (count + 1e-8)) on the applied weights."""
    maskb = mask.astype(bool)
    count = float(maskb.sum())
    w = applied[maskb]
    den = count + 1e-8
    mean = float(w.sum()) / den
    mean_sq = float((w * w).sum()) / den
    std = math.sqrt(max(mean_sq - mean * mean, 0.0)) if count > 1 else 0.0
    # verl's 1 / masked_mean((w / mean)^2), i.e. the Kish fraction (sum w)^2 / (n sum w^2), without verl's two
    # 1e-8 guards (they dominate when weights are tiny, e.g. a sequence ratio of e^-30); scale-free via w / max
    wmax = float(w.max())
    u = w / wmax if wmax > 0 else w
    ess = float(u.sum()) ** 2 / (count * float((u * u).sum())) if wmax > 0 else 0.0
    rejected = maskb & ~new_mask
    rejected_rows = rejected.any(axis=-1)
    return {
        "is_mean": mean,
        "is_max": float(w.max()),
        "is_min": float(w.min()),
        "is_std": std,
        "eff_sample_size": float(ess),
        "masked_fraction": float(rejected.sum()) / den,
        "seq_masked_fraction": float(rejected_rows.mean()),
        "kept_tokens": int((maskb & new_mask).sum()),
        "rejected_tokens": int(rejected.sum()),
        "rejected_sequences": int(rejected_rows.sum()),
    }


# ── Batches ────────────────────────────────────────────────────────────────────────────────────
def ragged_mask(lengths, cols):
    return np.array([[1.0 if t < n else 0.0 for t in range(cols)] for n in lengths])


def make_batches():
    batches = {}

    # 1. A plain batch: ragged rows, small noise, one token with a large gap, one row far off-policy.
    rng = np.random.default_rng(28)
    rows, cols = 5, 8
    mask = ragged_mask([8, 6, 8, 3, 7], cols)
    rollout = np.log(rng.uniform(0.02, 1.0, (rows, cols)))
    old = rollout + rng.normal(0.0, 0.05, (rows, cols))
    old[1, 2] = rollout[1, 2] + 2.5  # one token far above the cap
    old[2, :] = rollout[2, :] + 0.3  # the whole row drifted: sequence ratio exp(2.4) ~ 11
    old[4, 3] = rollout[4, 3] - 1.7  # one token far below 1/cap
    old = np.minimum(old, -1e-6)
    batches["ragged"] = (rollout, old, mask)

    # 2. Masked positions hold garbage (finite): neither framework may let it through.
    rng = np.random.default_rng(29)
    rows, cols = 4, 6
    mask = ragged_mask([6, 4, 2, 5], cols)
    rollout = np.log(rng.uniform(0.05, 1.0, (rows, cols)))
    old = rollout + rng.normal(0.0, 0.1, (rows, cols))
    old = np.minimum(old, -1e-6)
    garbage = np.array([1e3, -1e4, 37.5, -500.0, 2.0, 123.25])
    for b in range(rows):
        for t in range(cols):
            if mask[b, t] == 0:
                old[b, t] = garbage[(b + t) % len(garbage)]
                rollout[b, t] = -garbage[(b * 3 + t) % len(garbage)]
    batches["garbage_in_padding"] = (rollout, old, mask)

    # 3. A single-token sequence, an all-masked row, and a normal row.
    rollout = np.array([[-0.7, -9.0, -9.0, -9.0], [-2.0, -0.1, -0.3, -1.2], [-0.5, -0.5, -0.5, -0.5]])
    old = np.array([[-0.2, -1.0, -1.0, -1.0], [-2.1, -0.1, -0.2, -1.0], [-4.0, -4.0, -4.0, -4.0]])
    mask = np.array([[1.0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    batches["single_token_and_empty_row"] = (rollout, old, mask)

    # 4. A one-token batch [1,1].
    batches["one_token"] = (np.array([[-1.25]]), np.array([[-0.125]]), np.array([[1.0]]))

    # 5. Bounds hit exactly: log-ratio 0 (ratio exactly 1) and exactly log 2 (ratio exp(log 2)).
    rollout = np.array([[-0.5, -0.25, -1.0], [-0.75, -0.5, -2.0]])
    old = np.array([[-0.5, -0.25, -1.0], [-0.75, -0.5 + math.log(2.0), -2.0]])
    mask = np.ones((2, 3))
    batches["ratio_on_bounds"] = (rollout, old, mask)

    # 6. Long rows with a systematic gap: sequence ratios of exp(+-30) and an underflow (exp(-800) = 0).
    rows, cols = 3, 10
    rollout = np.full((rows, cols), -0.05)
    old = np.empty((rows, cols))
    rollout[0, :] = -3.0
    old[0, :] = -0.05  # log-ratio +2.95 per token, sum +29.5
    old[1, :] = -3.05  # log-ratio -3 per token, sum -30
    old[2, :] = -80.05  # log-ratio -80 per token, sum -800: exp underflows to 0 in float64
    mask = np.ones((rows, cols))
    batches["extreme_rows"] = (rollout, old, mask)
    return batches


TRL_CONFIGS = [
    # TRL defaults: clip_max 3.0, clip_min None
    {"vllm_importance_sampling_clip_min": None, "vllm_importance_sampling_clip_max": 3.0},
    {"vllm_importance_sampling_clip_min": 0.5, "vllm_importance_sampling_clip_max": 2.0},
    # lower bound only (allowed for every mode; mask modes then have no upper bound)
    {"vllm_importance_sampling_clip_min": 0.25, "vllm_importance_sampling_clip_max": None},
]
TRL_MODES = ["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]
OPENRLHF_CONFIGS = [
    # OpenRLHF default --algo.advantage.is_correction_threshold 0.5 5.0
    {"is_correction_threshold_low": 0.5, "is_correction_threshold_high": 5.0},
    {"is_correction_threshold_low": 1.0, "is_correction_threshold_high": 2.0},
]
OPENRLHF_TYPES = ["tis", "icepop", "seq-mask-tis"]


def encode(x):
    """Non-finite floats as the strings the project's records use."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def params_text(cfg):
    return ",".join(f"{k}={'null' if v is None else v}" for k, v in cfg.items())


def flat(a):
    return [encode(float(v)) for v in np.asarray(a, dtype=np.float64).ravel()]


def main():
    batches = make_batches()
    out_batches = {}
    for name, (rollout, old, mask) in batches.items():
        out_batches[name] = {
            "shape": {"rows": int(mask.shape[0]), "cols": int(mask.shape[1])},
            "old_log_prob": flat(old),
            "rollout_log_prob": flat(rollout),
            "response_mask": flat(mask),
        }
    cases = []
    skipped = []
    for name, (rollout, old, mask) in batches.items():
        for mode in TRL_MODES:
            for cfg in TRL_CONFIGS:
                ratio, applied, new_mask, metrics = trl_vllm_is(
                    old, rollout, mask, mode,
                    cfg["vllm_importance_sampling_clip_min"], cfg["vllm_importance_sampling_clip_max"],
                )
                if not np.all(np.isfinite(applied)):
                    skipped.append(f"{name}/trl:{mode}/{params_text(cfg)}")
                    continue  # the lab refuses a non-finite weight (tested separately)
                cases.append({
                    "name": f"{name}/trl:{mode}/{params_text(cfg)}",
                    "batch": name,
                    "framework": "trl",
                    "mode": mode,
                    "params": cfg,
                    "outputs": {
                        "framework_tensor_shape": list(ratio.shape),
                        "framework_tensor": flat(ratio),
                        "weights": flat(applied),
                        "mask": flat(new_mask),
                        "metrics": {k: encode(v) for k, v in metrics.items()},
                        "summary": summary(applied, mask, new_mask),
                    },
                })
        for ctype in OPENRLHF_TYPES:
            for cfg in OPENRLHF_CONFIGS:
                coef, applied, new_mask, metrics = openrlhf_vllm_is(
                    old, rollout, mask, ctype,
                    cfg["is_correction_threshold_low"], cfg["is_correction_threshold_high"],
                )
                if not np.all(np.isfinite(applied)):
                    skipped.append(f"{name}/openrlhf:{ctype}/{params_text(cfg)}")
                    continue
                cases.append({
                    "name": f"{name}/openrlhf:{ctype}/{params_text(cfg)}",
                    "batch": name,
                    "framework": "openrlhf",
                    "mode": ctype,
                    "params": cfg,
                    "outputs": {
                        "framework_tensor_shape": list(coef.shape),
                        "framework_tensor": flat(coef),
                        "weights": flat(applied),
                        "mask": flat(new_mask),
                        "metrics": {k: encode(v) for k, v in metrics.items()},
                        "summary": summary(applied, mask, new_mask),
                    },
                })
    doc = {
        "meta": {
            "description": "TRL vllm_importance_sampling_mode and OpenRLHF is_correction_type kernels, transcribed "
            "line by line from torch into numpy (float64), with the verl-definition summary of the applied weights",
            "generator": "scripts/golden/trl_openrlhf_is.py",
            "numpy_version": np.__version__,
            "trl": {
                "repo": "github.com/huggingface/trl",
                "commit": TRL_COMMIT,
                "source": "trl/trainer/grpo_trainer.py GRPOTrainer._generate_and_score_completions (IS block, "
                "sampling/ metrics); trl/trainer/grpo_config.py",
            },
            "openrlhf": {
                "repo": "github.com/OpenRLHF/OpenRLHF",
                "commit": OPENRLHF_COMMIT,
                "source": "openrlhf/models/loss.py PolicyLoss.forward; openrlhf/models/utils.py masked_mean; "
                "openrlhf/cli/train_ppo_ray.py",
            },
            "format": {
                "batches": "name -> {shape, old_log_prob (trainer), rollout_log_prob (engine), response_mask}, row-major",
                "framework_tensor": "the framework's own tensor: TRL importance_sampling_ratio ((B,T) or (B,1)); "
                "OpenRLHF the coefficient that multiplies the per-token loss ((B,T)); values at masked positions "
                "are whatever the framework computes there (they never reach the masked loss)",
                "weights": "what multiplies the loss at response-mask tokens (the framework tensor broadcast to "
                "[B,T]), 0 at masked positions",
                "mask": "response_mask AND the mode's keep decision (mask modes, icepop, seq-mask-tis)",
                "metrics": "the framework's own logged metric names (one process, one micro-batch)",
                "summary": "verl rollout_corr_helper definitions (masked_mean = sum / (count + 1e-8)) on weights: "
                "is_mean, is_max, is_min, is_std (sqrt(mean(w^2) - mean^2), 0 for one token), eff_sample_size "
                "(verl's 1 / mean((w / mean w)^2) without its 1e-8 guards: the Kish fraction (sum w)^2 / (n sum w^2) "
                "over the n valid tokens, 0 if every weight is 0), masked_fraction (rejected / "
                "(valid + 1e-8)), seq_masked_fraction (rows with a rejected valid token / all rows)",
                "tolerance": "float64: 1e-12 relative (sums may be ordered differently)",
            },
            "skipped": {
                "why": "an applied weight is not finite: the lab refuses these with NON_FINITE",
                "cases": skipped,
            },
        },
        "batches": out_batches,
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(cases)} cases over {len(out_batches)} batches to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
