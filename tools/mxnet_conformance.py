"""Run Apache MXNet 1.9.1's own autograd, Gluon and optimizer tests, unchanged, on the
MXNet facade.

    python tools/mxnet_conformance.py /path/to/mxnet            # a checkout of tag 1.9.1
    python tools/mxnet_conformance.py /path/to/tests/python/unittest
    python tools/mxnet_conformance.py PATH -- -x -k test_dense  # extra pytest arguments

The test files (and the `common.py` they import) are copied into a temporary
directory next to a generated `conftest.py`, which installs the facade under the name
`mxnet` (`tapegrad.compat.alias`) before anything imports it, and provides the two pieces
of test infrastructure the files expect: a small `nose.tools` (nose no longer runs on
current Pythons) and an empty `models` module (`common.py` imports it for other tests).
Nothing upstream is kept in this repository.

The tests listed in DESELECTED exercise what the facade leaves out on purpose; each
carries its reason. The script prints passed / failed / deselected per file and exits
non-zero when an in-scope test fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
FILES = (
    "test_autograd.py",
    "test_contrib_autograd.py",
    "test_higher_order_grad.py",
    "test_gluon.py",
    "test_loss.py",
    "test_gluon_trainer.py",
    "test_init.py",
    "test_gluon_rnn.py",
    "test_gluon_save.py",
    "test_gluon_data.py",
    "test_numpy_gluon.py",
    "test_gluon_contrib.py",
    "test_optimizer.py",
)
HELPERS = ("common.py",)

SPARSE = "sparse storage (row_sparse / csr) is out of scope"
SYMBOL = (
    "calls blocks on symbols to build graphs (mx.sym ops, get_internals, "
    "SymbolBlock(outputs, inputs)); tapegrad builds none (export / SymbolBlock.imports of "
    "traced graphs are supported, tests/compat/test_mxnet_hybrid_export.py)"
)
ENGINE = "engine internals (_fresh_grad, op hooks) are out of scope"
DEVICES = "needs several devices"
SPARSE_LOOP = "loops over row_sparse / csr storage (the dense case is tests/compat's)"
ARCSINH = (
    "expects MXNet's second derivative of arcsinh, whose sign is wrong: d2/dx2 "
    "asinh(x) = -x / (x^2 + 1)^1.5 (tests/compat checks the right one)"
)
ULP = (
    "asks float32 exp(1) + 1 to within 1e-7, under one float32 ulp (2.4e-7) there; "
    "NumPy's float32 exp is one ulp from MXNet's (the gradients themselves are right)"
)
PRETRAINED = "downloads pretrained model weights (no network here)"
PRETRAINED_PORTED = (
    "downloads pretrained ResNet weights (no network here); "
    "tests/compat/test_mxnet_hybrid_export.py runs its checks on an untrained narrow ResNet"
)
MODULE = "downloads pretrained weights and reads the export with mx.mod.Module (not provided)"
MODULE_FIT = (
    "trains a symbol graph with mx.mod.Module on an mx.io.NDArrayIter (the Module API, "
    "symbols and mx.io are not provided; the loss itself is checked in tests/compat/"
    "test_mxnet_losses.py)"
)
MODULE_INIT = (
    "initializes a symbol graph through mx.mod.Module (the Module API and symbols are not "
    "provided; Gluon initialization is test_gluon.py's)"
)
IGNORED_KWARG = (
    "its reference passes axis= to mx.nd.broadcast_maximum, an option that op does not "
    "have (MXNet ignores it, the facade refuses it); CosineEmbeddingLoss is checked in "
    "tests/compat/test_mxnet_losses.py"
)
DOWNLOAD_RECORDIO = (
    "downloads an image data set and reads it as RecordIO (no network here; RecordIO is "
    "not provided)"
)
DOWNLOAD_DATASETS = (
    "reads MNIST / CIFAR-10 / Fashion-MNIST from data/ (downloads them: no network here)"
)
SYMBOLIC_SHAPES = (
    "leaves a parameter's input size to MXNet's symbolic shape inference through "
    "x.dot(w1) in hybrid_forward (tapegrad's layers infer their own deferred shapes; a "
    "hand-written params.get needs the full shape)"
)
CONTRIB_SYMBOLS = (
    "unrolls the cells on symbols (mx.sym.Variable, list_outputs, infer_shape); the same cells "
    "on arrays are test_rnn_cells' and tests/compat/test_mxnet_contrib_rnn.py's"
)
OPTIMIZER_SPARSE_LOOP = (
    "its loop over the options also compares row_sparse / csr weights and gradients (sparse "
    "storage is out of scope); its dense comparisons all pass (the file with the sparse "
    "calls dropped), and tests/compat/test_mxnet_optimizer.py checks the dense rules"
)
OPTIMIZER_MODULE = (
    "trains a symbol graph with mx.mod.Module (the Module API, symbols and mx.io are not "
    "provided; lr_mult / wd_mult and Nadam's update are checked in "
    "tests/compat/test_mxnet_optimizer.py)"
)
OPTIMIZER_MISSING = "LAMB, LARS and SGLD are not provided by the facade's mx.optimizer"
KVSTORE = "kvstores (mx.kv, update_on_kvstore) are not provided"
DEVICES_TRAINER = (
    "needs several devices (ctx=[cpu(0), cpu(1)]); the single-device updates (momentum, "
    "lr_mult, lr_scheduler, save/load_states) are tests/compat/test_gluon_trainer_updates.py's"
)
CELLS = (
    "unrolls cells on symbols (mx.sym.Variable, list_outputs, infer_shape, eval); the cells "
    "themselves run on arrays (test_rnn_cells, test_unroll_layout)"
)
CELLS_MODULE = "unrolls cells on a symbol and binds it with mx.mod.Module (not provided)"
VARIABLE_LENGTH = (
    "ends with a symbol graph run through mx.mod.Module (its array part, valid_length on "
    "every cell kind, is checked in tests/compat/test_mxnet_rnn_cells.py)"
)
FP16 = "float16 RNN layers need a GPU"
NOT_A_TEST = (
    "contrib.autograd's test_section() scope, collected only because the file star-imports it"
)

DESELECTED: dict[str, dict[str, str]] = {
    "test_autograd.py": {
        "test_get_symbol": SYMBOL,
        "test_grad_with_stype": SPARSE,
        "test_sparse_dot_grad": SPARSE,
        "test_detach_updated_grad": ENGINE,
        "test_unary_func": SPARSE_LOOP,
        "test_binary_func": SPARSE_LOOP,
        "test_attach_grad": SPARSE_LOOP,
        "test_gradient": ULP,
    },
    "test_contrib_autograd.py": {
        "test_detach_updated_grad": ENGINE,
        "test_section": NOT_A_TEST,
    },
    "test_higher_order_grad.py": {
        "test_arcsinh": ARCSINH,
    },
    "test_gluon.py": {
        "test_parameter": DEVICES,
        "test_parameter_invalid_access": SPARSE,
        "test_parameter_dict": SPARSE,
        "test_global_norm_clip": SPARSE_LOOP,
        "test_basic": SYMBOL,
        "test_dense": SYMBOL,
        "test_inline": SYMBOL,
        "test_legacy_save_params": SYMBOL,
        "test_save_load": PRETRAINED,
        "test_invalid_parameter_stype": SPARSE,
        "test_invalid_parameter_grad_stype": SPARSE,
        "test_sparse_parameter": SPARSE,
        "test_parameter_row_sparse_data": SPARSE,
        "test_sparse_symbol_block": SPARSE,
        "test_sparse_hybrid_block": SPARSE,
        "test_sparse_hybrid_block_grad": SPARSE,
        "test_symbol_block": SYMBOL,
        "test_symbol_block_save_load": SYMBOL,
        "test_export": MODULE,
        "test_import": PRETRAINED_PORTED,
        "test_hybrid_multi_context": DEVICES,
        "test_split_and_load": DEVICES,
        "test_op_hook_output_names": ENGINE,
        "test_hybrid_static_memory": PRETRAINED_PORTED,
        "test_hybrid_static_memory_switching": PRETRAINED_PORTED,
        "test_hybrid_static_memory_recording": PRETRAINED_PORTED,
    },
    "test_loss.py": {
        **{
            name: MODULE_FIT
            for name in (
                "test_ce_loss",
                "test_bce_loss",
                "test_kl_loss",
                "test_l2_loss",
                "test_l1_loss",
                "test_ctc_loss_train",
                "test_sample_weight_loss",
                "test_saveload",
                "test_huber_loss",
                "test_hinge_loss",
                "test_squared_hinge_loss",
                "test_triplet_loss",
                "test_sdml_loss",
                "test_poisson_nllloss_mod",
                "test_bce_loss_with_pos_weight",
            )
        },
        "test_cosine_loss": IGNORED_KWARG,
    },
    "test_gluon_trainer.py": {
        "test_multi_trainer": SPARSE,
        "test_trainer_with_sparse_grad_on_single_context": SPARSE,
        "test_trainer_with_teststore": KVSTORE,
        "test_trainer": DEVICES_TRAINER,
        "test_trainer_save_load": f"{DEVICES}; {KVSTORE}",
        "test_trainer_sparse_save_load": SPARSE,
        "test_trainer_multi_layer_init": SPARSE,
        "test_trainer_reset_kv": f"{DEVICES}; {KVSTORE}",
        "test_trainer_sparse_kv": SPARSE,
        "test_trainer_lr_sched": DEVICES_TRAINER,
    },
    "test_init.py": {
        "test_default_init": MODULE_INIT,
        "test_variable_init": MODULE_INIT,
        "test_aux_init": MODULE_INIT,
        "test_rsp_const_init": SPARSE,
    },
    "test_gluon_rnn.py": {
        **{
            name: CELLS
            for name in (
                "test_rnn",
                "test_lstm",
                "test_gru",
                "test_residual",
                "test_residual_bidirectional",
                "test_stack",
                "test_hybridstack",
                "test_bidirectional",
                "test_zoneout",
            )
        },
        "test_lstm_forget_bias": CELLS_MODULE,
        "test_rnn_unroll_variant_length": VARIABLE_LENGTH,
        "test_rnn_layers_fp16": FP16,
    },
    "test_optimizer.py": {
        "test_lr_wd_mult": OPTIMIZER_MODULE,
        "test_nadam": OPTIMIZER_MODULE,
        "test_sparse_sgd": SPARSE,
        "test_std_sparse_sgd": SPARSE,
        **{
            name: OPTIMIZER_SPARSE_LOOP
            for name in ("test_sgd", "test_adam", "test_rms", "test_ftrl", "test_adagrad")
        },
        **{name: OPTIMIZER_MISSING for name in ("test_lamb", "test_multilamb", "test_sgld")},
    },
    "test_numpy_gluon.py": {
        "test_optimizer_with_np_ndarrays": SYMBOLIC_SHAPES,
    },
    "test_gluon_contrib.py": {
        **{
            name: CONTRIB_SYMBOLS
            for name in (
                "test_convrnn",
                "test_convlstm",
                "test_convgru",
                "test_lstmp",
                "test_vardrop",
            )
        },
        "test_concurrent": "calls the blocks on a symbol (mx.sym.var) before the arrays",
        "test_datasets": "downloads WikiText-2 (no network; contrib.data.text not provided)",
        "test_ModulatedDeformableConvolution": "deformable convolutions are not provided",
    },
    "test_gluon_data.py": {
        "test_recordimage_dataset": DOWNLOAD_RECORDIO,
        "test_recordimage_dataset_with_data_loader_multiworker": DOWNLOAD_RECORDIO,
        "test_image_folder_dataset": DOWNLOAD_RECORDIO,
        "test_datasets": DOWNLOAD_DATASETS,
    },
}

_CONFTEST = """\
import json, sys, types
sys.path.insert(0, {src!r})
from tapegrad.compat import alias
alias.install("mxnet")


def _nose_tools():
    import unittest, functools
    tools = types.ModuleType("nose.tools")
    case = unittest.TestCase("__init__")

    def make_decorator(func):
        def decorate(newfunc):
            return functools.wraps(func)(newfunc)
        return decorate

    def raises(*exceptions):
        def decorate(func):
            @functools.wraps(func)
            def newfunc(*args, **kwargs):
                try:
                    func(*args, **kwargs)
                except exceptions:
                    return
                raise AssertionError(f"{{func.__name__}} did not raise {{exceptions}}")
            return newfunc
        return decorate

    tools.make_decorator, tools.raises = make_decorator, raises
    tools.assert_raises = case.assertRaises
    tools.ok_ = lambda expr, msg=None: case.assertTrue(expr, msg)
    tools.eq_ = lambda a, b, msg=None: case.assertEqual(a, b, msg)
    for name in ("assert_equal", "assert_true", "assert_false", "assert_almost_equal",
                 "assert_not_equal", "assert_in", "assert_is_none"):
        camel = "assert" + "".join(p.title() for p in name.split("_")[1:])
        setattr(tools, name, getattr(case, camel))
    nose = types.ModuleType("nose")
    nose.tools = tools
    return nose, tools


try:
    import nose.tools  # noqa: F401
except Exception:
    sys.modules["nose"], sys.modules["nose.tools"] = _nose_tools()
sys.modules.setdefault("models", types.ModuleType("models"))

_DESELECT = json.loads({deselect!r})
_RESULTS = {{}}


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        name = item.name.split("[")[0]
        (drop if name in _DESELECT.get(item.path.name, {{}}) else keep).append(item)
    for item in drop:
        _RESULTS[item.nodeid] = "deselected"
    items[:] = keep
    config.hook.pytest_deselected(items=drop)


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        if report.nodeid not in _RESULTS or report.outcome != "passed":
            _RESULTS[report.nodeid] = "skipped" if report.skipped else report.outcome


def pytest_collectreport(report):
    if report.failed:
        _RESULTS[report.nodeid + "::<import>"] = "failed"


def pytest_sessionfinish(session):
    with open({results!r}, "w") as f:
        json.dump(_RESULTS, f)
"""


def find_tests(path: Path) -> Path:
    for candidate in (path / "tests" / "python" / "unittest", path):
        if all((candidate / f).is_file() for f in FILES + HELPERS):
            return candidate
    raise SystemExit(
        f"mxnet_conformance: {path} holds neither tests/python/unittest/ nor "
        f"the files {', '.join(FILES + HELPERS)}; pass a checkout of MXNet 1.9.1"
    )


def run(tests: Path, files: tuple[str, ...], pytest_args: list[str], table: dict) -> dict[str, str]:
    src = str(SRC)
    with tempfile.TemporaryDirectory(prefix="mxnet-conformance-") as tmp:
        work = Path(tmp)
        for name in FILES + HELPERS:
            shutil.copy(tests / name, work / name)
        results = work / "results.json"
        (work / "conftest.py").write_text(
            _CONFTEST.format(src=src, deselect=json.dumps(table), results=str(results))
        )
        (work / "pytest.ini").write_text("[pytest]\n")
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--continue-on-collection-errors",
            "--rootdir",
            str(work),
            *files,
            *pytest_args,
        ]
        subprocess.run(cmd, cwd=work, check=False)
        return json.loads(results.read_text()) if results.exists() else {}


def summarize(results: dict[str, str], files: tuple[str, ...], table: dict) -> int:
    print(f"\n{'file':28} {'passed':>7} {'failed':>7} {'skipped':>8} {'deselected':>11}")
    failed_total = 0
    for name in files:
        outcomes = [v for k, v in results.items() if k.split("::")[0] == name]
        counts = {o: outcomes.count(o) for o in ("passed", "failed", "skipped", "deselected")}
        failed_total += counts["failed"]
        print(
            f"{name:28} {counts['passed']:7} {counts['failed']:7} {counts['skipped']:8} "
            f"{counts['deselected']:11}"
        )
    print("\ndeselected (out of scope):")
    for name in files:
        for test, reason in table.get(name, {}).items():
            print(f"  {name}::{test}: {reason}")
    return 1 if failed_total or not results else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "path",
        type=Path,
        help="an MXNet checkout (tag 1.9.1) or its tests/python/unittest directory",
    )
    parser.add_argument(
        "--files",
        nargs="+",
        choices=FILES,
        default=list(FILES),
        metavar="FILE",
        help="run only these upstream files (default: all of them)",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    # everything after "--" goes to pytest (split here: argparse would give it to PATH's
    # neighbour only when no option comes between them)
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args = parser.parse_args(argv)
    args.pytest_args = pytest_args
    table = DESELECTED
    files = tuple(args.files)
    return summarize(run(find_tests(args.path), files, args.pytest_args, table), files, table)


if __name__ == "__main__":
    sys.exit(main())
