//go:build !unix

package results

// openFlags: this platform has no O_NOFOLLOW; openRegular's Lstat check
// stands alone.
const openFlags = 0
