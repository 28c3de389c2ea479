"""The printed log of active-learning runs: one line per event worth a line in a papermill log
or a terminal (a run read back, placed on a Ray node, waiting, resumed, a round finished)."""

from __future__ import annotations

__all__ = ["PrintLog"]


class PrintLog:
    """A callback printing one line per round: what a papermill log or a terminal shows."""

    def __call__(self, event: str, **p) -> None:
        who = f"{p['task']}/{p['strategy']}/seed {p['seed']}"
        if event == "run_reused":
            print(f"{who}: finished earlier, read back from {p['folder'].name}")
        elif event == "run_placed":
            print(f"{who}: runs on {p['host']} (Ray node {p['node'][:8]}, pid {p['pid']})")
        elif event == "run_waiting":
            print(f"{who}: another process is running it in {p['folder'].name}; waiting for it")
        elif event == "run_started" and (p["resumed"] or p.get("removed_temporaries")):
            removed = p.get("removed_temporaries")
            print(
                f"{who}: resuming after round {p['resumed']} of {len(p['schedule'])}"
                + (f" ({removed} temporary file(s) of a killed run removed)" if removed else "")
            )
        elif event == "round_finished":
            print(f"{who} round {p['record']['round']}: {self.round_line(p['record'])}")

    @staticmethod
    def round_line(r: dict) -> str:
        """What a finished round's line says after its run and round number."""
        dev = r.get("dev")
        ap = (
            f"dev AP {dev['ap']:.3f} [{dev['ap_ci'][0]:.3f}, {dev['ap_ci'][1]:.3f}]"
            if dev
            else "not evaluated"
        )
        secs = " ".join(f"{k} {v:.0f}s" for k, v in r["seconds"].items())
        return f"{r['labels']:,} labels, {r['positives_found']:,} positives; {ap}; {secs}"
