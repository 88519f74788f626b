package demo

// All returns the generators of every benchmark, in display order.
func All() []Generator {
	return []Generator{ICBCBench(), FinDeepResearch(), FinDeepForecast(), FinResearchBench2()}
}
