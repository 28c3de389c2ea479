"""Put on PYTHONPATH of Ray's processes by the Ray tests (and ``make bench-ray``): it keeps
jsonschema from loading its IRI format checker, ``rfc3987_syntax`` (which the notebook stack
installs), whose dozens of Earley grammars cost every Python process that imports Ray about
2 s of CPU. On a machine whose cores are busy that put Ray's dashboard agent past the raylet's
fixed 15 s wait for its port file, and the node never started (ray-project/ray#65983). Ray
checks no IRI formats; nothing else runs with this folder on its path."""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # `import rfc3987_syntax` raises ImportError
