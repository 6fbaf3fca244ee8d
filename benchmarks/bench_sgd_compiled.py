"""What a compiled online-SGD loop would gain: the numpy loop against a numba prototype.

Run (in a separate venv: numba is not a dependency of aimrepro):

    python -m venv /tmp/numba && /tmp/numba/bin/pip install -e . numba
    /tmp/numba/bin/python benchmarks/bench_sgd_compiled.py

Tied attention, softmax T = 2, ρ = ½, AIM scalings, lr 0.01, at d = 100
(B = 256) and d = 400 (B = 512).  The prototype keeps numpy's random
stream and BLAS for the three GEMMs of a step (X W, X W*, Xᵀ Q) and does
all the per-sample T×T work (indices, both softmaxes, residual, loss,
vector–Jacobian product, Q = (g + gᵀ) P) in one ``numba.njit`` loop, i.e.
everything a compiled loop can remove.  It checks that the factor after the
run equals :func:`aimrepro.paper2.sgd.run_sgd`'s to rounding and prints one
JSON line: CPU ms per step (best of 5) of numpy, numba and of drawing the
batch alone.  docs/benchmarks.md, "Paper 2: online SGD", has the numbers and
why the package does not use numba.
"""
import os, time, math, json
for v in ("OMP_NUM_THREADS","OPENBLAS_NUM_THREADS","MKL_NUM_THREADS","NUMBA_NUM_THREADS"): os.environ[v]="1"
import numpy as np, numba
from aimrepro.paper2.sgd import ProblemSpec, SGDSettings, initial_problem, run_sgd, step_time

@numba.njit(cache=False, fastmath=False)
def small_ops(P, Pt, w_sq, t_trace, t_scale, inv_sqrt_d, beta, c2):
    B, T, r = P.shape
    rt = Pt.shape[2]
    Q = np.zeros((B, T, r))
    losses = np.empty(B)
    tr_g = 0.0
    h = np.empty((T, T)); ht = np.empty((T, T)); y = np.empty((T, T)); yt = np.empty((T, T)); g = np.empty((T, T))
    for b in range(B):
        for a in range(T):
            for c in range(T):
                s = 0.0
                for k in range(r):
                    s += P[b, a, k] * P[b, c, k]
                st = 0.0
                for k in range(rt):
                    st += Pt[b, a, k] * Pt[b, c, k]
                if a == c:
                    s -= w_sq
                    st = t_scale * st - t_trace
                else:
                    st = t_scale * st
                h[a, c] = s * inv_sqrt_d
                ht[a, c] = st * inv_sqrt_d
        loss = 0.0
        for a in range(T):
            m = h[a, 0]; mt = ht[a, 0]
            for c in range(1, T):
                m = max(m, h[a, c]); mt = max(mt, ht[a, c])
            z = 0.0; zt = 0.0
            for c in range(T):
                y[a, c] = math.exp(beta * (h[a, c] - m)); z += y[a, c]
                yt[a, c] = math.exp(beta * (ht[a, c] - mt)); zt += yt[a, c]
            dot = 0.0
            for c in range(T):
                y[a, c] /= z; yt[a, c] /= zt
                res = y[a, c] - yt[a, c]
                loss += res * res
                dot += res * y[a, c]
            for c in range(T):
                g[a, c] = c2 * beta * y[a, c] * ((y[a, c] - yt[a, c]) - dot)
        losses[b] = 0.5 * loss
        for a in range(T):
            tr_g += g[a, a]
            for c in range(T):
                w = g[a, c] + g[c, a]
                for k in range(r):
                    Q[b, a, k] += w * P[b, c, k]
    return losses, Q, tr_g

def run_compiled(student, teacher, loss, T, settings, rng):
    W = student.W; d = W.shape[0]; B = settings.batch; lr = settings.lr
    dt = step_time("tied", lr, d); n = settings.n_steps(dt)
    Lt = teacher.left; t_scale = teacher.scale
    t_trace = teacher.scale * np.sum(Lt * Lt)
    for _ in range(n):
        X = rng.standard_normal((B, T, d))
        flat = X.reshape(B * T, d)
        P = (flat @ W).reshape(B, T, -1); Pt = (flat @ Lt).reshape(B, T, -1)
        losses, Q, tr_g = small_ops(P, Pt, np.sum(W * W), t_trace, t_scale, 1 / math.sqrt(d), loss.student.beta, 2 * loss.prefactor)
        grad = flat.T @ Q.reshape(B * T, -1)
        grad -= 2.0 * tr_g * W
        W -= lr * grad / (B * math.sqrt(d))
        float(np.mean(losses))
    return W

out = {"load": os.getloadavg()}
for d, B, steps in ((100, 256, 400), (400, 512, 30)):
    spec = ProblemSpec("tied", "softmax", 2, d, rho=0.5, normalisation="aim")
    dt = step_time("tied", 0.01, d)
    settings = SGDSettings(lr=0.01, batch=B, horizon=steps * dt, n_records=2)
    s, t, r = initial_problem(spec, 0); run_compiled(s, t, spec.loss(), 2, SGDSettings(lr=0.01, batch=B, horizon=2 * dt, n_records=2), r)  # compile
    # same trajectory?
    s1, t1, r1 = initial_problem(spec, 0); run_sgd(s1, t1, spec.loss(), 2, settings, r1)
    s2, t2, r2 = initial_problem(spec, 0); run_compiled(s2, t2, spec.loss(), 2, settings, r2)
    rel = float(np.max(np.abs(s1.W - s2.W)) / np.max(np.abs(s1.W)))
    bn = bc = 1e9
    for rep in range(5):
        s, t, r = initial_problem(spec, 0); c = time.process_time(); run_sgd(s, t, spec.loss(), 2, settings, r); bn = min(bn, (time.process_time() - c) / steps)
        s, t, r = initial_problem(spec, 0); c = time.process_time(); run_compiled(s, t, spec.loss(), 2, settings, r); bc = min(bc, (time.process_time() - c) / steps)
    rng = np.random.default_rng(0); c = time.process_time()
    for _ in range(steps): rng.standard_normal((B, 2, d))
    out[f"d{d}_B{B}"] = {"numpy_ms": 1e3 * bn, "numba_ms": 1e3 * bc, "rng_ms": 1e3 * (time.process_time() - c) / steps, "rel_diff_W": rel}
out["load_end"] = os.getloadavg()
print(json.dumps(out))
