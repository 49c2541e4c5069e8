#ifndef CLZ4_SHIM_H
#define CLZ4_SHIM_H
#if __has_include(<lz4.h>)
#include <lz4.h>
#else
#error "liblz4 headers not found: install liblz4-dev (apt-get install -y liblz4-dev)"
#endif
#endif
