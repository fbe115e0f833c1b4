"""Score one configuration on sunspots over seeds 0, 1, 2: validation RMSE (what defaults were chosen on)
and test RMSE (reported, never used to choose). Used to pick the defaults; see results/defaults_selection.md.

    python benchmarks/select_defaults.py attention-rnn '{"skip_init": "zeros"}'
"""
import sys, json, time, numpy as np
from tsattn.config import RunConfig
from tsattn.harness import fit
model = sys.argv[1]
changes = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
seeds = [0, 1, 2]
vals, tests, secs, eps = [], [], [], []
for seed in seeds:
    r = fit(RunConfig(model=model, seed=seed).updated(**changes))
    vals.append(r.metrics["validation"]["model"]["rmse"]); tests.append(r.metrics["test"]["model"]["rmse"])
    secs.append(r.fit_seconds); eps.append(r.epochs_run)
print(f"{model} {json.dumps(changes)} val {np.mean(vals):.3f}±{np.std(vals):.2f} test {np.mean(tests):.3f}±{np.std(tests):.2f} [{' '.join('%.2f'%t for t in tests)}] fit {np.mean(secs):.1f}s epochs {eps}", flush=True)
