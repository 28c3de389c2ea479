"""ONNX Runtime and Ray are extras (``pip install pairlab[onnx]``, ``pairlab[ray]``): pairlab
imports without them, and choosing either without it is one error naming the extra. In a fresh
process, as a user without them has it: an import at module level anywhere in pairlab fails
here, though every other test process has both installed (``make install`` installs them)."""

import subprocess
import sys
import textwrap

MISSING = ("onnxruntime", "onnx", "ray")

SCRIPT = textwrap.dedent(
    """
    import sys
    for name in {missing!r}:
        sys.modules[name] = None  # `import name` raises ImportError, as when not installed
    import pairlab, pairlab.experiments, pairlab.models, pairlab.notebook, pairlab.runner
    import pairlab.session, pairlab.widgets
    from pairlab.experiments import distributed
    from pairlab.models import inference

    for name in ("onnx", "onnx-int8"):
        try:
            inference.for_inference(object(), name=name)
        except inference.InferenceBackendError as error:
            print(error)
    try:
        distributed.connect()
    except ImportError as error:
        print(error)
    """
).format(missing=MISSING)


def test_pairlab_imports_without_the_extras_and_choosing_one_names_it():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    onnx, int8, ray = done.stdout.splitlines()
    for line, name in ((onnx, "onnx"), (int8, "onnx-int8")):
        assert line.startswith(f"inference backend {name!r} needs ONNX Runtime"), line
        assert "-e '.[onnx]'" in line and "PAIRLAB_INFERENCE_BACKEND=torch" in line, line
    assert ray == "backend='ray' needs Ray, which is not installed: pip install 'pairlab[ray]'"
