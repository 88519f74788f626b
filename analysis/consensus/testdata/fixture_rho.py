# Expected rank correlations of the fixture in fixture_test.go, computed
# with scipy (spearmanr: average ranks for ties; kendalltau: tau-b) from
# the gold item pass rates derived by hand in TestFixture's comments.
# Run: python3 fixture_rho.py (scipy 1.10); the printed values are the
# ones TestFixture expects.
from scipy.stats import spearmanr, kendalltau

base = [100, 200/3, 200/3, 100/3, 0]  # A B C D E, full panel
variants = {
    "without J2": [75, 75, 50, 25, 0],
    "without J3": [100, 50, 75, 25, 0],
    # held-out triple: rates on the gold rubrics of the other two products
    "A + B + C": [100, 100, 100, 100, 0],
    "A + B + D": [100, 50, 100, 50, 0],
    "A + B + E": [100, 0, 100, 0, 0],
    "A + C + D": [100, 100, 50, 50, 0],
    "A + C + E": [50, 100, 0, 0, 0],
    "A + D + E": [200/3, 200/3, 100/3, 0, 0],
    "B + C + D": [100, 50, 75, 25, 0],
    "B + C + E": [100, 100/3, 200/3, 0, 0],
    "B + D + E": [100, 100, 0, 0, 0],
    "C + D + E": [200/3, 100/3, 200/3, 0, 0],
}
rhos = []
for name, v in variants.items():
    rho, tau = spearmanr(base, v).statistic, kendalltau(base, v).statistic
    print(f"{name}: rho {rho:.15g} tau {tau:.15g}")
    if "+" in name:
        rhos.append(rho)
print(f"splits mean {sum(rhos)/len(rhos):.15g} min {min(rhos):.15g} share>=0.95 {100*sum(r >= 0.95 for r in rhos)/len(rhos):g}")
print(f"leave-one-judge-out mean {(1 + spearmanr(base, variants['without J2']).statistic + spearmanr(base, variants['without J3']).statistic)/3:.15g}")
