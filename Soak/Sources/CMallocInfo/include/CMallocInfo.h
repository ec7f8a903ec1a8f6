#ifndef KITE_SOAK_MALLOC_INFO_H
#define KITE_SOAK_MALLOC_INFO_H

#include <stddef.h>

/// What glibc's allocator holds at one moment (`mallinfo2`, which Swift's Glibc module does not import).
typedef struct {
    /// Bytes of the allocations in use (`uordblks` plus `hblkhd`, the large ones mapped on their own).
    size_t inUse;
    /// Bytes free inside the arenas (`fordblks`): kept by the allocator, counted in resident memory until trimmed.
    size_t free;
} KiteSoakHeap;

KiteSoakHeap kite_soak_heap(void);

#endif
