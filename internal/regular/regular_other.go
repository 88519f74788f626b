//go:build !unix

package regular

// openFlags: this platform has no O_NOFOLLOW; Open's Lstat check
// stands alone.
const openFlags = 0
