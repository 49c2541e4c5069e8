#define _GNU_SOURCE
#include <fcntl.h>
#include "CLinuxCalls.h"

int clinux_start_writeback(int fd, int64_t offset, int64_t length) {
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
}
