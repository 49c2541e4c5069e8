// Linux system calls that `import Glibc` does not export (they need _GNU_SOURCE). Only the
// storage engine's OS room calls them.
#ifndef CLINUXCALLS_H
#define CLINUXCALLS_H
#include <stdint.h>

/// Starts writeback of a file range without waiting (sync_file_range with SYNC_FILE_RANGE_WRITE).
/// Returns 0, or -1 with errno set.
int clinux_start_writeback(int fd, int64_t offset, int64_t length);

#endif
