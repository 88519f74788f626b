#!/usr/bin/python3
"""Writes synthetic.csv, a SYNTHETIC per-task score matrix, and
synthetic_expected.json, the values analysis/scores must reproduce from it,
computed here with numpy and statsmodels (independently of finrepro).

    cd analysis/scores/testdata && /usr/bin/python3 synthetic.py

Made with statsmodels 0.13.5, numpy 1.24.2. The matrix: 20 base tasks in
English and Chinese (40 rows), clustered by base task so that the two language
versions of a task are resampled together, a theme column, and four systems
with some cells missing. Scores are points out of 100. Nothing here is a real
system's result.
"""
import csv
import json
import random

import numpy as np
import statsmodels.api as sm

rng = random.Random(20)
SYSTEMS = ["Alpha (synthetic)", "Beta (synthetic)", "Gamma (synthetic)", "Delta (synthetic)"]
SKILL = [70.0, 66.0, 65.0, 50.0]
THEMES = ["equity", "credit", "macro", "fx"]

rows = []
for b in range(20):
    difficulty = rng.gauss(0, 10)
    for lang in ["EN", "ZH"]:
        row = {"id": f"synthetic-{b:02d}-{lang}", "base": f"base-{b:02d}", "language": lang, "theme": THEMES[b % 4]}
        for s, name in enumerate(SYSTEMS):
            v = SKILL[s] + difficulty + rng.gauss(0, 6) - (4.0 if lang == "ZH" else 0.0)
            v = round(min(100.0, max(0.0, v)), 1)
            row[name] = v
        rows.append(row)
# missing cells: Delta skips every fifth task, Gamma two tasks, Beta one
for i, row in enumerate(rows):
    if i % 5 == 0:
        row["Delta (synthetic)"] = None
rows[3]["Gamma (synthetic)"] = None
rows[17]["Gamma (synthetic)"] = None
rows[8]["Beta (synthetic)"] = None

with open("synthetic.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["id", "base", "language", "theme"] + SYSTEMS)
    for row in rows:
        w.writerow([row["id"], row["base"], row["language"], row["theme"]] +
                   ["" if row[s] is None else f"{row[s]:.1f}" for s in SYSTEMS])

exp = {"systems": {}}
complete = [all(row[s] is not None for s in SYSTEMS) for row in rows]
for s in SYSTEMS:
    idx = [i for i, row in enumerate(rows) if row[s] is not None]
    y = np.array([rows[i][s] for i in idx])
    g = np.array([int(rows[i]["base"][5:]) for i in idx])
    X = np.ones((len(y), 1))
    cl = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": g})
    naive = sm.OLS(y, X).fit()
    en = [rows[i][s] for i in idx if rows[i]["language"] == "EN"]
    zh = [rows[i][s] for i in idx if rows[i]["language"] == "ZH"]
    exp["systems"][s] = {
        "mean": float(cl.params[0]),
        "se_cluster": float(cl.bse[0]),
        "se_naive": float(naive.bse[0]),
        "answered": len(idx),
        "clusters": len(set(g.tolist())),
        "mean_complete": float(np.mean([rows[i][s] for i in range(len(rows)) if complete[i]])),
        "mean_EN": float(np.mean(en)),
        "mean_ZH": float(np.mean(zh)),
    }
exp["complete_tasks"] = sum(complete)
# paired difference of Alpha and Beta on shared tasks: CR1 SE of the differences
idx = [i for i, row in enumerate(rows) if row["Alpha (synthetic)"] is not None and row["Beta (synthetic)"] is not None]
d = np.array([rows[i]["Alpha (synthetic)"] - rows[i]["Beta (synthetic)"] for i in idx])
g = np.array([int(rows[i]["base"][5:]) for i in idx])
pd_ = sm.OLS(d, np.ones((len(d), 1))).fit(cov_type="cluster", cov_kwds={"groups": g})
exp["pair_alpha_beta"] = {"difference": float(pd_.params[0]), "se_cluster": float(pd_.bse[0]), "shared": len(idx)}
with open("synthetic_expected.json", "w") as f:
    json.dump(exp, f, indent=1, sort_keys=True)
    f.write("\n")
