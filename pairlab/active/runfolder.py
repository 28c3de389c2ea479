"""A run over a run folder, what the pair-level loop (:class:`~.loop.ActiveRun`) and the
query-level loop (:class:`~.query_loop.QueryRun`) share: run, resume or read back under the
folder's lock, keep the run's archive (:mod:`.archive`) up to date, and embed a pool's items."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..data.loaders import Pool
from ..io import locked, remove_stale, to_json
from ..models.training import quiet_progress
from . import store
from .archive import restore, save
from .config import ActiveConfig
from .store import load_result

__all__ = ["RunFolderRun", "finished_run"]


class RunFolderRun:
    """The round loop over a run folder, one skeleton for both levels (:class:`~.loop.ActiveRun`
    over pairs, :class:`~.query_loop.QueryRun` over questions): run, resume or read back under
    the folder's lock, round after round, each round's batch appended to the labels, its record
    archived and announced. A subclass has ``config``, ``folder``, ``pool``, ``learner``
    and the methods ``_round(i, n, model, ids, labels, records) -> (model,
    record, batch, batch_labels)``, ``_load_model``, ``_finish`` and ``_emit``."""

    archive = None  # the folder of the run's committed copy (:mod:`.archive`), if any

    def run(self) -> dict:
        """Run (or resume, or read back) the whole run; returns its result. One process at a
        time works in a run folder: another one asking for the same run waits, then reads it
        back. With an archive, a folder holding fewer rounds than it is restored from it first."""
        result = None if self.archive else self._finished()
        if result is not None:
            return result
        with locked(
            self.folder / ".lock", on_wait=lambda: self._emit("run_waiting", folder=self.folder)
        ):
            if self.archive:
                restore(self.archive, self.folder, self.pool)
            return self._finished() or self._run()

    def _run(self) -> dict:
        store.write_config(self.folder, to_json(self.config.to_dict()))
        removed = remove_stale(self.folder, recursive=True)  # what a killed writer left
        sizes = self.config.schedule()
        records, ids, labels, rounds = store.resume(self.folder, len(sizes))
        self._emit(
            "run_started",
            config=self.config,
            schedule=sizes,
            resumed=len(records),
            folder=self.folder,
            removed_temporaries=len(removed),
        )
        with quiet_progress():
            model = self._load_model(len(records), ids, labels) if records else None
            for i in range(len(records) + 1, len(sizes) + 1):
                model, record, batch, batch_labels = self._round(
                    i, sizes[i - 1], model, ids, labels, records
                )
                ids, labels, rounds = store.append_batch(
                    ids, labels, rounds, batch, batch_labels, i
                )
                records.append(record)
                self._archived()
                self._emit("round_finished", record=record)
            return self._finish(model, records, ids, labels, rounds)

    def _archived(self) -> None:
        """Bring the run's archive up to date (after each round and at the end)."""
        if self.archive:
            save(self.folder, self.archive)

    def _finished(self) -> dict | None:
        result = finished_run(self.config, self.folder)
        if result is not None:
            self._emit("run_reused", result=result, folder=self.folder)
        return result

    def _embed(self, model, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
        """Item embeddings under ``model`` (the learner keeps them: :class:`~.learner.Embeddings`)."""
        left = self.learner.embed(model, pool.left_texts)
        same = pool.right_texts is pool.left_texts  # a symmetric pool
        return left, left if same else self.learner.embed(model, pool.right_texts)


def finished_run(config: ActiveConfig, folder) -> dict | None:
    """The result of ``config``'s run if it finished in ``folder``, else None. Its ``folder`` is
    the one it was read from: a result written before :func:`~.archive.rekey` renamed the folder
    (or its archive) names the old one, which no longer exists."""
    result = load_result(folder)
    if result is None or result["config"] != to_json(config.to_dict()):
        return None
    return {**result, "folder": Path(folder).name}
