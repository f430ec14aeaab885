"""Incremental learning (HLM paper section 5.5): its schemes, their code inputs, the job and the report.

One rule per scheme, ``incremental_{scheme}`` (workflow/rules/incremental.smk): the HLM schemes (Scheme I,
Scheme II, retraining; :mod:`hlm.local_mapping.incremental`) on every data set, and the online KDE
classifiers (oKDE, odKDE; :mod:`hlm.kde`) on those of kind vectors. Each job runs the rounds of one scheme on
every split of one data set (``run``); ``report`` draws the paper's Figure 1 and Table 5 (``paper.yaml``).
Unlike the papers' protocols (:mod:`hlm.pipeline.protocols`), its jobs read the distance matrices and run
per (data set, scheme). Their code inputs: ``hlm.pipeline.sources.incremental_sources``.
"""

from __future__ import annotations

#: What an incremental job runs: its job script's imports and the round protocol of section 5.5, with
#: the learners; they cluster by VSH only and never fit Kernel HLM.
INCREMENTAL_MODULES = ("hlm.pipeline.jobs", "hlm.pipeline.provenance", "hlm.pipeline.incremental.run")
INCREMENTAL_NOT_RUN = ("local_mapping/_clustering/generalized_kmeans.py", "local_mapping/_clustering/ward.py",
                       "local_mapping/_kernel_hlm.py")

#: The config's ``incremental`` settings that each scheme's learner takes (hlm.local_mapping:
#: SchemeI, SchemeII, Retrain). Those the config leaves out keep the learner's default.
LEARNER_SETTINGS = {
    "scheme_i": ("n_init",),
    "scheme_ii": ("n_init", "step", "v", "estimate"),
    "retrain": ("n_init", "step"),
    "okde": (),  # the online KDE learners: their own defaults (docs/online-kde-spec.md)
    "odkde": (),
}


def learner_params(config: dict, scheme: str) -> dict:
    """The hyper-parameters a validated ``config`` sets for the learner of ``scheme`` (only those it sets)."""
    section = config["incremental"]
    return {k: section[k] for k in LEARNER_SETTINGS[scheme] if k in section}


#: the incremental schemes on feature vectors (kind: vectors only): scheme -> discriminative (odKDE);
#: their learner (docs/online-kde-spec.md section 9), imported on use
VECTOR_SCHEMES = {"okde": False, "odkde": True}
ONLINE_KDE_LEARNER = "hlm.kde._learner"


def scheme_applies(scheme: str, dataset_kind: str) -> bool:
    """The online KDE schemes need feature vectors; the HLM schemes run on any data set."""
    return scheme not in VECTOR_SCHEMES or dataset_kind == "vectors"
