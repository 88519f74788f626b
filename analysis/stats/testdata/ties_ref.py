# Reference values for ties_ref_test.go: Spearman's rho (average ranks for
# ties) and Kendall's tau-b from scipy, on inputs with ties, n = 2 and
# NaN. Run: python3 ties_ref.py > ties_ref.json (scipy 1.10.1). A null is
# scipy's nan: the statistic is undefined.
import json, math
from scipy.stats import spearmanr, kendalltau
import warnings
warnings.simplefilter("ignore")

cases = [
    ("pass rates with ties", [97.3, 67.57, 67.57, 62.1, 55.0, 27.03, 27.03], [95.1, 70.2, 64.0, 64.0, 51.3, 30.0, 27.03]),
    ("leaderboard, heavy ties", [1, 1, 1, 2, 2, 3, 4, 4], [2, 1, 1, 2, 3, 3, 4, 5]),
    ("all but one tied", [5, 5, 5, 5, 9], [1, 2, 3, 4, 5]),
    ("reversed with ties", [1, 2, 2, 3], [3, 2, 2, 1]),
    ("two", [1, 2], [1, 2]),
    ("two reversed", [1, 2], [5, 3]),
    ("two tied", [1, 1], [1, 2]),
    ("constant", [4, 4, 4], [1, 2, 3]),
    ("nan", [1, 2, float("nan"), 4], [1, 2, 3, 4]),
]
out = []
for name, x, y in cases:
    rho, tau = spearmanr(x, y).statistic, kendalltau(x, y).statistic
    f = lambda v: None if math.isnan(v) else float(v)
    out.append({"name": name, "x": [None if math.isnan(v) else v for v in x], "y": y, "rho": f(rho), "tau": f(tau)})
print(json.dumps(out, indent=1))
