#include "CMallocInfo.h"

#include <malloc.h>

KiteSoakHeap kite_soak_heap(void) {
    struct mallinfo2 info = mallinfo2();
    KiteSoakHeap heap = {info.uordblks + info.hblkhd, info.fordblks};
    return heap;
}
