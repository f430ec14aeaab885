"""Pipeline stages of incremental learning (workflow/rules/incremental.smk; paper section 5.5)."""

from __future__ import annotations

import logging

import pandas as pd

from hlm.data.artifacts import read_distances, write_frame

log = logging.getLogger("hlm")


def incremental(*, dataset: str, scheme: str, distances: str, splits_path: str, out: str, seed: int,
                params: dict, tags: dict) -> None:
    """One scheme on every split of one data set: 9 rounds each, to Parquet (MLflow: stages.track).

    ``params``: the learner hyper-parameters the config sets; the others keep the learner's
    defaults. The metadata (and MLflow) record the values used (``learner_settings``).
    """
    from hlm.evaluation.incremental import learner_settings, run_incremental

    artifact = read_distances(distances)
    frame = run_incremental(artifact, pd.read_parquet(splits_path), scheme, dataset=dataset, seed=seed,
                            params=params)
    write_frame(frame, out, metadata={"dataset": dataset, "scheme": scheme,
                                      "params": learner_settings(scheme, params),
                                      **{k: v for k, v in tags.items() if k in ("config_hash", "git_commit")}})
    last = frame[frame["round"] == frame["round"].max()]
    log.info("%s/%s: last-round error %.2f%% (sd %.2f) over %d splits; %.3f s of updates per split",
             dataset, scheme, last.error_rate.mean(), last.error_rate.std(ddof=1) if len(last) > 1 else 0.0,
             len(last), frame.groupby("split")["round_seconds"].sum().mean())


def incremental_report(inputs: list[str], *, datasets: list[str], schemes: list[str], figure_dir: str,
                       csv_out: str, md_out: str) -> None:
    """Figure 1 (one PNG per data set) and Table 5 (csv + md) from the incremental Parquet files."""
    from pathlib import Path

    from hlm.data.artifacts import write_text
    from hlm.reporting.figures import plot_incremental
    from hlm.reporting.paper import PAPER_INCREMENTAL_TIMES
    from hlm.reporting.tables import SCHEME_LABELS, incremental_time_markdown, incremental_time_table

    runs = {}
    for path in inputs:
        dataset, scheme = Path(path).parent.name, Path(path).stem
        runs[(scheme, dataset)] = pd.read_parquet(path)
    for d in datasets:
        plot_incremental({s: runs[(s, d)] for s in schemes if (s, d) in runs},
                         Path(figure_dir) / f"incremental_{d}.png", dataset=d, labels=SCHEME_LABELS)
    times = incremental_time_table(runs, datasets, schemes, PAPER_INCREMENTAL_TIMES)
    write_text(times.to_csv(index=False), csv_out)
    write_text(incremental_time_markdown(times, datasets, schemes), md_out)
    log.info("incremental figures and %s written", md_out)
