//go:build !unix

package cache

// openFlags: this platform has no O_NOFOLLOW; openRegular's Lstat check
// stands alone.
const openFlags = 0
