//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package inspect

const mapPopulate = 0
