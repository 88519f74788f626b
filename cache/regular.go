package cache

// Bounds of the store's small files; the pack index is bounded by
// maxIndexFor.
const (
	maxFormatBytes = 256          // FORMAT
	maxDictBytes   = 4 * dictSize // a dictionary
)
