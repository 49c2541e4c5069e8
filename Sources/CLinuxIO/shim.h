#ifndef CLINUXIO_SHIM_H
#define CLINUXIO_SHIM_H
// Linux file calls that the Swift overlay of Glibc does not export (it declares them only under
// _GNU_SOURCE). The only importer is RealmStorage/OS/SystemFile.swift.
#if defined(__linux__)
#include <sys/types.h>

// glibc's own declaration (fcntl.h, _GNU_SOURCE), repeated word for word so both may be seen.
extern int sync_file_range(int __fd, __off64_t __offset, __off64_t __count, unsigned int __flags);

/// Starts writing back the dirty pages of `length` bytes at `offset` without waiting for them
/// (SYNC_FILE_RANGE_WRITE). Returns 0, or -1 with errno set.
static inline int clinuxio_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, (__off64_t)offset, (__off64_t)length, 2u /* SYNC_FILE_RANGE_WRITE */);
}
#endif
#endif
