"""Sweeps on Ray: each run (task, strategy, seed) is one Ray task, with the resources it needs
declared, so a cluster or a machine with several GPUs runs as many at once as fit.

The runs write their folders where the local backend writes them (``root`` must be a path
every node sees: a shared file system), so a sweep on Ray gives the files a local sweep gives
and either backend reads back or resumes the other's runs. Runs finished earlier are read back
on the driver without starting Ray. A run's events go to an actor (:class:`Mailbox`) and from
there to the driver's callbacks (the dashboard, the printed log) while the runs execute. A
worker killed mid-run is retried by Ray (``RETRIES``), and the retry resumes the run from its
folder.

Ray is imported here only, and only when a sweep asks for it: ``pip install pairlab[ray]``.
"""

from __future__ import annotations

import os
import socket

from ..active.loop import ActiveRun, emit
from ..active.store import finished_run
from ..models import inference

__all__ = ["INSTALL", "RETRIES", "Mailbox", "connect", "gpus_per_run", "import_ray", "run_on_ray"]

INSTALL = "pip install 'pairlab[ray]'"
RETRIES = 3  # a run whose worker died (killed, out of memory, node lost) starts again, resuming
POLL_SECONDS = 0.25  # how often the driver hands the mailbox's events to its callbacks
# what a worker takes from the driver's environment: the cache folder, model sharing, offline hubs
FORWARDED = (
    "PAIRLAB_",
    "HF_",
    "TRANSFORMERS_",
    "TOKENIZERS_PARALLELISM",
    "SENTENCE_TRANSFORMERS_HOME",
)


def import_ray():
    """The ``ray`` module, or an ImportError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"backend='ray' needs Ray, which is not installed: {INSTALL}") from None
    return ray


def connect(address: str | None = None):
    """Ray, connected: the session this process already has, else ``ray.init``: to a running
    cluster at ``address`` (``"auto"``: the one this machine belongs to; or ``"host:port"``), or
    with None a new local instance on this machine's cores (without the dashboard). The session
    stays open for the sweeps after this one."""
    ray = import_ray()
    if not ray.is_initialized():
        if address is None:
            ray.init(address="local", include_dashboard=False)
        else:
            ray.init(address=address)
    return ray


def run_on_ray(
    runs,
    prepared: dict,
    *,
    callbacks=(),
    learner=None,
    address: str | None = None,
    cpus_per_run: float = 1,
    gpus_per_run: float | None = None,
) -> dict:
    """Execute ``runs`` (the sweep's :class:`~pairlab.experiments.sweeps.Run` list) as Ray tasks of
    ``cpus_per_run`` CPUs (the torch threads each run gets) and ``gpus_per_run`` GPUs (None: one
    where the cluster has GPUs, else none); ``prepared`` maps each task to its ``(pools,
    eval_sets)``. Events reach ``callbacks`` on this process as the runs emit them. Returns
    ``{run.key: result}`` in the order of ``runs``."""
    _check_resources(cpus_per_run, gpus_per_run)
    results = {run.key: _read_back(run, callbacks) for run in runs}
    todo = [run for run in runs if results[run.key] is None]
    if todo:
        results.update(
            _submit(
                connect(address), todo, prepared, callbacks, learner, cpus_per_run, gpus_per_run
            )
        )
    return results


def _read_back(run, callbacks) -> dict | None:
    result = finished_run(run.config, run.folder)
    if result is not None:
        emit(callbacks, run.config, "run_reused", result=result, folder=run.folder)
    return result


def _submit(ray, runs, prepared, callbacks, learner, cpus: float, gpus: float | None) -> dict:
    """Each run as a Ray task; the events in the mailbox delivered while they execute."""
    mailbox = ray.remote(Mailbox).options(num_cpus=0).remote()
    data = {task: ray.put(prepared[task]) for task in dict.fromkeys(run.task for run in runs)}
    task = ray.remote(_execute).options(
        num_cpus=cpus,
        num_gpus=gpus_per_run(ray, gpus),
        max_retries=RETRIES,
        scheduling_strategy="SPREAD",
    )
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED)}
    pending = {
        task.remote(
            run.config,
            data[run.task],
            run.folder,
            learner(run.config) if learner else None,
            mailbox,
            env,
            max(1, int(cpus)),
            inference.chosen(),
        ): run.key
        for run in runs
    }
    results = {}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
            _deliver(ray.get(mailbox.take.remote()), callbacks)  # a done run's are all there
            for ref in done:
                results[pending.pop(ref)] = ray.get(ref)  # a run's error is raised here
    finally:
        for ref in pending:  # an error or an interrupt: the rest stop; their folders resume
            ray.cancel(ref)
        ray.kill(mailbox)
    return results


class Mailbox:
    """The Ray actor that holds the runs' events until the driver takes them. A synchronous
    actor runs one submitter's calls in order, so a run's events arrive in the order it sent
    them. A run sends without waiting (a task waiting in ``ray.get`` lends its CPU to another
    run, and more runs than cores would execute at once), so a worker killed mid-run may lose
    its last few events; its retry reports from ``run_started`` (``resumed`` rounds) on."""

    def __init__(self):
        self.events = []

    def put(self, event: str, payload: dict) -> None:
        self.events.append((event, payload))

    def take(self) -> list:
        taken, self.events = self.events, []
        return taken


def _deliver(events, callbacks) -> None:
    for event, payload in events:
        for callback in callbacks:
            callback(event, **payload)


def _execute(
    config, data, folder, learner, mailbox, env: dict, threads: int, backends: inference.Backends
) -> dict:
    """One run on a Ray worker, as the local backend runs it: the driver's cache and model
    settings, ``threads`` torch threads, the driver's inference ``backends``, its events sent to
    the driver's mailbox (all of them there before it returns)."""
    import ray
    import torch

    os.environ.update(env)
    inference.use(backends)
    torch.set_num_threads(threads)
    sent = []
    forward = [lambda event, **payload: sent.append(mailbox.put.remote(event, payload))]
    emit(
        forward,
        config,
        "run_placed",
        node=ray.get_runtime_context().get_node_id(),
        host=socket.gethostname(),
        pid=os.getpid(),
    )
    pools, eval_sets = data
    try:
        return ActiveRun(config, pools, eval_sets, folder, callbacks=forward, learner=learner).run()
    finally:
        ray.get(sent[-1])  # the calls run in order: the last one done, all are


def gpus_per_run(ray, gpus: float | None) -> float:
    """``gpus``, or with None one GPU per run where the cluster's nodes have GPUs (Ray counts
    those torch can see on each), else none."""
    if gpus is not None:
        return gpus
    return 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0


def _check_resources(cpus, gpus) -> None:
    if not (isinstance(cpus, (int, float)) and cpus >= 1):
        raise ValueError(f"cpus_per_run must be a number >= 1, got {cpus!r}")
    if gpus is not None and not (isinstance(gpus, (int, float)) and gpus >= 0):
        raise ValueError(f"gpus_per_run must be None or a number >= 0, got {gpus!r}")
