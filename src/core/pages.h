/* SPDX-License-Identifier: Apache-2.0 */
/* pages.h - memory in whole pages of its own, outside the heap: resident only
 * once written, and given back to the kernel at its free (glibc's heap keeps
 * what it frees). For buffers that sit untouched most of the time. */
#ifndef GPUCTL_PAGES_H
#define GPUCTL_PAGES_H

#include <stddef.h>

/* n bytes (rounded up to whole pages), zero-filled as calloc's; NULL when out
 * of memory. */
void *pages_alloc(size_t n);
/* Frees p (from pages_alloc(n)); NULL is nothing. */
void pages_free(void *p, size_t n);
/* Gives pages_alloc'ed memory whose contents are dead back to the kernel; it
 * reads as zeros when it is written again. */
void pages_drop(void *p, size_t n);
/* The whole pages inside [p, p + n) (a heap buffer's), likewise. */
void pages_drop_inside(void *p, size_t n);

#endif
