"""tapegrad (this project), eager on NumPy: the same workloads as the peers."""
FRAMEWORKS = {"tapegrad": {},
              # the same workloads under tg.compile (the compiled part: end of this file)
              "tapegrad-compiled": {"compiled": True, "only": ["w1", "w1_50", "w2", "w3"]},
              # W8 one parameter at a time (foreach=False), next to the default multi-tensor path
              "tapegrad-per-param": {"foreach": False, "only": ["w8"]},
              # W3 with conv ops split over the batch on two Python threads (opt-in:
              # tapegrad.ops.parallel.set_intra_op_threads; bench/NOTES.md, "Stop 20")
              "tapegrad-split": {"intra_op": 2, "only": ["w3"]},
              "tapegrad-compiled-split": {"compiled": True, "intra_op": 2, "only": ["w3"]}}
DISTRIBUTIONS = ["tapegrad"]
IMPORT = "import tapegrad"
NA = {"w5": "W5 is the numpy-manual limit only"}

tg = None
F = None


def setup(opts):
    global tg, F
    import tapegrad as _tg
    import tapegrad.nn.functional as _F

    tg, F = _tg, _F
    tg.manual_seed(0)
    if opts.get("intra_op"):
        from tapegrad.ops import parallel

        parallel.set_intra_op_threads(opts["intra_op"])
    return {"version": tg.__version__, "dtype": "float32"}


def _leaf(a):
    return tg.tensor(a, requires_grad=True)


def w1_op_chain(opts, x0, ops):
    def run():
        x = _leaf(x0)
        h = x
        for kind, c in ops:
            if kind == "mul":
                h = h * c
            elif kind == "add":
                h = h + c
            elif kind == "tanh":
                h = h.tanh()
            elif kind == "expscaled":
                h = (h * c).exp()
            elif kind == "sin":
                h = h.sin()
        h.sum().backward()
        return x.grad.numpy()

    return run


def _mlp(P, X):
    W1, b1, W2, b2, W3, b3 = P
    h = F.relu(X @ W1 + b1)
    h = F.relu(h @ W2 + b2)
    return h @ W3 + b3


def w2_mlp(opts, params, X, y, lr):
    P = [_leaf(p) for p in params]
    Xt, yt = tg.from_numpy(X), tg.from_numpy(y)
    opt = tg.optim.SGD(P, lr=lr)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(_mlp(P, Xt), yt)
        loss.backward()
        opt.step()
        return loss.item()

    def infer():
        with tg.no_grad():
            return _mlp(P, Xt)

    return {"step": step, "infer": infer}


def w3_cnn(opts, params, X, y, lr):
    P = [_leaf(p) for p in params]
    Xt, yt = tg.from_numpy(X), tg.from_numpy(y)
    opt = tg.optim.SGD(P, lr=lr)

    def step():
        c1w, c1b, c2w, c2b, fw, fb = P
        opt.zero_grad(set_to_none=True)
        h = F.max_pool2d(F.relu(F.conv2d(Xt, c1w, c1b, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b, padding=1)), 2)
        logits = h.reshape(h.shape[0], -1) @ fw + fb
        loss = F.cross_entropy(logits, yt)
        loss.backward()
        opt.step()
        return loss.item()

    return {"step": step, "sanity_steps": 20}


def w4_deep(opts, n):
    from common import W4_ADD, W4_MUL

    def forward():
        x = tg.ones(1, requires_grad=True)
        h = x
        for _ in range(n):
            h = h * W4_MUL + W4_ADD
        return x, h

    def backward(state):
        x, h = state
        h.sum().backward()
        return x.grad.item()

    return {"forward": forward, "backward": backward}


# ---------------------------------------------------------------- tapegrad-compiled
# The same workloads under tg.compile: W1's chain is one compiled function whose output's
# backward replays the traced rules; W2 and W3 compile the whole step (zero_grad, forward,
# loss, backward, SGD step). The builders above stay the eager ones; `_or_compiled` routes
# the "tapegrad-compiled" framework (opts["compiled"]) to the builders below.


def _w1_compiled(opts, x0, ops):
    @tg.compile
    def chain(x):
        h = x
        for kind, c in ops:
            if kind == "mul":
                h = h * c
            elif kind == "add":
                h = h + c
            elif kind == "tanh":
                h = h.tanh()
            elif kind == "expscaled":
                h = (h * c).exp()
            elif kind == "sin":
                h = h.sin()
        return h.sum()

    def run():
        x = _leaf(x0)
        chain(x).backward()
        return x.grad.numpy()

    return run


def _compiled_step(P, forward_loss, X, y, lr):
    Xt, yt = tg.from_numpy(X), tg.from_numpy(y)
    opt = tg.optim.SGD(P, lr=lr)

    @tg.compile
    def step(x, labels):
        opt.zero_grad(set_to_none=True)
        loss = forward_loss(x, labels)
        loss.backward()
        opt.step()
        return loss

    return lambda: step(Xt, yt).item(), Xt


def _w2_compiled(opts, params, X, y, lr):
    P = [_leaf(p) for p in params]
    step, Xt = _compiled_step(P, lambda x, labels: F.cross_entropy(_mlp(P, x), labels), X, y, lr)

    @tg.compile
    def forward(x):
        return _mlp(P, x)

    def infer():
        with tg.no_grad():
            return forward(Xt)

    return {"step": step, "infer": infer}


def _w3_compiled(opts, params, X, y, lr):
    P = [_leaf(p) for p in params]

    def forward_loss(x, labels):
        c1w, c1b, c2w, c2b, fw, fb = P
        h = F.max_pool2d(F.relu(F.conv2d(x, c1w, c1b, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b, padding=1)), 2)
        return F.cross_entropy(h.reshape(h.shape[0], -1) @ fw + fb, labels)

    step, _ = _compiled_step(P, forward_loss, X, y, lr)
    return {"step": step, "sanity_steps": 20}


def w8_adam(opts, params, grads, lr):
    P = [_leaf(p.copy()) for p in params]
    for p, g in zip(P, grads):
        p.grad = tg.tensor(g.copy())
    kwargs = {"foreach": opts["foreach"]} if "foreach" in opts else {}  # (older tapegrad: none)
    opt = tg.optim.Adam(P, lr=lr, **kwargs)
    return {"step": opt.step, "params": lambda: [p.detach().numpy() for p in P]}


def _or_compiled(eager, compiled):
    def builder(opts, *args):
        return (compiled if opts.get("compiled") else eager)(opts, *args)

    builder.__name__, builder.__doc__ = eager.__name__, eager.__doc__
    return builder


w1_op_chain = _or_compiled(w1_op_chain, _w1_compiled)
w2_mlp = _or_compiled(w2_mlp, _w2_compiled)
w3_cnn = _or_compiled(w3_cnn, _w3_compiled)
