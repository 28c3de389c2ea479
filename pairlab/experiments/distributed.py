"""Sweeps on Ray (``pip install pairlab[ray]``, imported only here): each run one Ray task with
its resources declared, writing its folder where the local backend would (``root`` on a file
system every node sees), so either backend resumes the other's runs; a killed worker's run is
retried (``RETRIES``) and resumes. Events reach the driver's callbacks through an actor."""

from __future__ import annotations

import os
import socket

from ..active.loop import ActiveRun, emit
from ..active.store import finished_run
from ..models import inference

__all__ = ["connect", "gpus_per_run", "run_on_ray"]

INSTALL = "pip install 'pairlab[ray]'"
RETRIES = 3  # a run whose worker died (killed, out of memory, node lost) starts again, resuming
POLL_SECONDS = 0.25  # how often the driver hands the mailbox's events to its callbacks
# what a worker takes from the driver's environment: the cache folder, model sharing, offline hubs
FORWARDED = ("PAIRLAB_", "HF_", "TRANSFORMERS_", "TOKENIZERS_", "SENTENCE_TRANSFORMERS_HOME")


def connect(address: str | None = None):
    """Ray, connected: this process's session, else ``ray.init`` to the cluster at ``address``
    (``"auto"`` or ``"host:port"``), or with None a new local instance without the dashboard."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"backend='ray' needs Ray, which is not installed: {INSTALL}") from None
    if not ray.is_initialized():
        ray.init(address=address or "local", include_dashboard=False if address is None else None)
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
    """``{key: result}`` of the sweep's ``runs`` (``(key, config, folder)``), each a Ray task of
    ``cpus_per_run`` CPUs and ``gpus_per_run`` GPUs (None: one where the cluster has GPUs)."""
    if not (isinstance(cpus_per_run, (int, float)) and cpus_per_run >= 1):
        raise ValueError(f"cpus_per_run must be a number >= 1, got {cpus_per_run!r}")
    if not (gpus_per_run is None or isinstance(gpus_per_run, (int, float)) and gpus_per_run >= 0):
        raise ValueError(f"gpus_per_run must be None or a number >= 0, got {gpus_per_run!r}")
    results = {key: finished_run(config, folder) for key, config, folder in runs}
    for key, config, folder in runs:
        if results[key] is not None:
            emit(callbacks, config, "run_reused", result=results[key], folder=folder)
    todo = [run for run in runs if results[run[0]] is None]
    if todo:
        ray = connect(address)
        results.update(_submit(ray, todo, prepared, callbacks, learner, cpus_per_run, gpus_per_run))
    return results


def _submit(ray, runs, prepared, callbacks, learner, cpus: float, gpus: float | None) -> dict:
    """Each run as a Ray task; the events in the mailbox delivered while they execute."""
    mailbox = ray.remote(Mailbox).options(num_cpus=0).remote()
    data = {task: ray.put(prepared[task]) for task in {config.task for _, config, _ in runs}}
    task = ray.remote(_execute).options(
        num_cpus=cpus,
        num_gpus=gpus_per_run(ray, gpus),
        max_retries=RETRIES,
        scheduling_strategy="SPREAD",
    )
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED)}
    pending = {
        task.remote(
            config,
            data[config.task],
            folder,
            learner(config) if learner else None,
            mailbox,
            env,
            max(1, int(cpus)),
            inference.chosen(),
        ): key
        for key, config, folder in runs
    }
    results = {}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
            for event, payload in ray.get(mailbox.take.remote()):  # a done run's are all there
                for callback in callbacks:
                    callback(event, **payload)
            for ref in done:
                results[pending.pop(ref)] = ray.get(ref)  # a run's error is raised here
    finally:
        for ref in pending:  # an error or an interrupt: the rest stop; their folders resume
            ray.cancel(ref)
        ray.kill(mailbox)
    return results


class Mailbox:
    """The Ray actor holding the runs' events, each run's in order, until the driver takes them.
    A run sends without waiting, so a killed worker may lose its last few events."""

    def __init__(self):
        self.events = []

    def put(self, event: str, payload: dict) -> None:
        self.events.append((event, payload))

    def take(self) -> list:
        taken, self.events = self.events, []
        return taken


def _execute(
    config, data, folder, learner, mailbox, env: dict, threads: int, backends: tuple
) -> dict:
    """One run on a Ray worker with the driver's environment, inference ``backends`` and
    ``threads`` torch threads, its events sent to the mailbox (all there before it returns)."""
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
    """``gpus``, or with None one GPU per run where the cluster has GPUs, else none."""
    if gpus is None:
        return 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0
    return gpus
