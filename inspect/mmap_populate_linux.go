package inspect

import "syscall"

const mapPopulate = syscall.MAP_POPULATE
